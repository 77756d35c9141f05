// Edge list -> CsrGraph, with the clean-up importers need: symmetrising, dropping
// self-loops and duplicate edges, and counting what was dropped (import prints the counts;
// nothing is fixed silently). Counting sort by source then a per-row sort: O(E) memory for
// the edge list plus the CSR, which fits ogbn-products (124M directed edges) in ~2 GB.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dpgnn/graph/csr_graph.h"

namespace dpgnn::graph {

struct BuildOptions {
  bool symmetrize = true;          // add (v, u) for every (u, v)
  bool remove_self_loops = true;
  bool remove_duplicates = true;   // keep one copy of each (u, v)
};

struct BuildReport {
  std::int64_t input_edges = 0;          // records given
  std::int64_t self_loops_removed = 0;   // records (u, u) dropped
  std::int64_t duplicates_removed = 0;   // CSR entries dropped as repeats (after symmetrising)
  std::int64_t output_entries = 0;       // CSR entries in the result
};

// Builds a CSR over `num_nodes` nodes from parallel src/dst arrays. `context` (e.g. the
// input file) prefixes errors: an id outside [0, num_nodes) throws DataError.
CsrGraph build_csr(std::int64_t num_nodes, const std::vector<std::int64_t>& src,
                   const std::vector<std::int64_t>& dst, const BuildOptions& options,
                   BuildReport* report, const std::string& context);

// The same from an existing CSR (e.g. to clean an imported adjacency matrix).
CsrGraph rebuild_csr(const CsrGraph& g, const BuildOptions& options, BuildReport* report);

}  // namespace dpgnn::graph
