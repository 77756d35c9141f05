// Node -> part assignments (METIS k-way or structure-independent random) and their quality.
//
// METIS (Karypis & Kumar, "A fast and high quality multilevel scheme for partitioning
// irregular graphs", SIAM J. Sci. Comput. 1998; METIS 5.1 manual, METIS_PartGraphKway) runs on
// the structure only, symmetrised and without self-loops as METIS requires, with two balance
// constraints per vertex as DistDGL's partition_graph(balance_ntypes=train_mask,
// balance_edges=True) does (Zheng et al., "DistDGL", IA3 2020): weight 0 = 1 for a training
// node, weight 1 = the node's CSR row length (its edges). Structure is public for
// feature-level DP, so a structure-dependent partition leaks nothing (DESIGN.md 5).
//
// For node-level DP the structure is private: `random_assignment` depends only on (seed,
// node id) through the counter-based RNG (Philox; util/rng.h), never on edges. Each node gets
// a 64-bit key from the stream (seed, node); sorting nodes by key gives a seeded random
// permutation, split into P ranges of equal size (sizes differ by at most one).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dpgnn/graph/csr_graph.h"

namespace dpgnn::partition {

using PartId = std::int32_t;

enum class Method { metis, random };
const char* to_string(Method m);
// "metis" or "random"; UsageError naming the option otherwise.
Method parse_method(const std::string& s);

// METIS 5.1 as Debian ships it has a 32-bit idx_t: node counts, adjacency lengths (2 x the
// undirected edges) and weight sums must stay below 2^31.
constexpr std::int64_t kMetisIdxMax = std::numeric_limits<std::int32_t>::max();

// Throws UsageError naming the limit when `num_nodes` or `adjacency_entries` (the length of
// the symmetrised adjacency METIS receives, i.e. 2 x undirected edges) exceed kMetisIdxMax.
// `context` (the dataset file) prefixes the message.
void check_metis_limits(std::int64_t num_nodes, std::int64_t adjacency_entries, const std::string& context);

struct MetisOptions {
  int num_parts = 1;
  double imbalance = 0.05;  // allowed max part weight / mean - 1, per constraint (METIS ufactor / 1000)
  std::uint64_t seed = 0;   // METIS_OPTION_SEED (taken modulo 2^31)
};

// The two METIS vertex weights per node, interleaved [N, 2]: (is training node, row length).
// A constraint whose weights sum to zero (no training node, no edge) is replaced by unit
// weights, since METIS cannot balance a zero total.
std::vector<std::int32_t> balance_weights(const graph::CsrGraph& g, const std::vector<std::uint8_t>& train_mask);

// METIS k-way partition of `g` (any orientation: symmetrised, self-loops and duplicates
// dropped inside). Deterministic for a seed. Throws UsageError beyond kMetisIdxMax, IoError
// when METIS itself fails (with its return code).
std::vector<PartId> metis_assignment(const graph::CsrGraph& g, const std::vector<std::uint8_t>& train_mask,
                                     const MetisOptions& options, const std::string& context);

// Structure-independent balanced assignment: part sizes floor(N/P) or ceil(N/P).
std::vector<PartId> random_assignment(std::int64_t num_nodes, int num_parts, std::uint64_t seed);

// Checks P against the graph: 1 <= P <= num_nodes (UsageError otherwise).
void check_num_parts(std::int64_t num_parts, std::int64_t num_nodes, const std::string& context);

struct PartitionQuality {
  std::vector<std::int64_t> part_nodes;        // [P]
  std::vector<std::int64_t> part_edges;        // [P] CSR entries in the part's rows
  std::vector<std::int64_t> part_train_nodes;  // [P]
  std::int64_t undirected_edges = 0;           // unordered pairs {u, v}, u != v
  std::int64_t edge_cut = 0;                   // of those, pairs whose ends lie in different parts
  // max part weight / mean part weight (1 = perfect; 1 when the total weight is 0)
  double balance_nodes = 1, balance_train_nodes = 1, balance_edges = 1;
  double edge_cut_fraction() const {
    return undirected_edges == 0 ? 0.0 : static_cast<double>(edge_cut) / static_cast<double>(undirected_edges);
  }
};

// Counts, edge cut and balance of `part_of` on `g` (any orientation: a pair counts once
// however many of (u, v), (v, u) are stored).
PartitionQuality evaluate_partition(const graph::CsrGraph& g, const std::vector<std::uint8_t>& train_mask,
                                    const std::vector<PartId>& part_of, int num_parts);

// max_p w_p / (sum_p w_p / P); 1 when the sum is 0.
double balance_of(const std::vector<std::int64_t>& part_weights);

}  // namespace dpgnn::partition
