// PT-Scotch k-way partition of a distributed graph (private to src/partition). PT-Scotch takes
// an MPI communicator: dist hands it over as a native handle (dist/collectives.h), so no MPI
// call is made here.
//
// PT-Scotch (Chevalier & Pellegrini, "PT-Scotch: a tool for efficient parallel graph
// ordering", Parallel Computing 2008; Scotch 7.0 user's guide, SCOTCH_dgraphPart) wants each
// rank's block of a symmetric graph without self-loops: rank r holds the consecutive global
// vertices [begin_r, begin_r + n_r), blocks in rank order. It takes ONE vertex weight, where
// METIS here balances two constraints (training nodes, edges): combined_weight folds them
// into one (docs/partitioning.md, "PT-Scotch details").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dpgnn/partition/assignment.h"

namespace dpgnn::partition::detail {

// This rank's block of a symmetric, loop-free, duplicate-free graph.
struct LocalGraph {
  std::int64_t begin = 0;              // global id of the first local vertex
  std::vector<std::int64_t> xadj;      // [n_local + 1]
  std::vector<std::int64_t> adjncy;    // global neighbour ids
  std::vector<std::int64_t> weights;   // [n_local] vertex weights (>= 1)
  std::int64_t num_local() const { return static_cast<std::int64_t>(xadj.size()) - 1; }
};

// The single vertex weight: 1 + row_length + ratio * is_train, with
// ratio = round((N + E) / T) (T training nodes, E CSR entries) or 0 when T = 0, so that the
// node-plus-edge term and the training-node term each carry about half the total weight.
std::int64_t train_weight_ratio(std::int64_t num_nodes, std::int64_t num_edges, std::int64_t num_train);
inline std::int64_t combined_weight(std::int64_t row_length, bool is_train, std::int64_t ratio) {
  return 1 + row_length + (is_train ? ratio : 0);
}

// PT-Scotch's working set is about 150 bytes per local adjacency entry (measured at 4 ranks on
// a DC-SBM graph, docs/benchmarks.md; ~20x its int64 input), so it partitions a uniform edge
// sample: each undirected pair {u, v} is kept with probability
// keep_fraction(N, E), decided by a hash of (seed, min(u, v), max(u, v)) so that both ends
// agree, and the sample stays symmetric and deterministic. Average degree after sampling:
// about kScotchSampleDegree (nothing is dropped from sparser graphs). 12 trades cut for memory
// (docs/partitioning.md: degree 16 still peaked at 3.06 GiB per rank on the products shape at
// 4 ranks); the edge cut is always computed on the FULL graph.
constexpr double kScotchSampleDegree = 12.0;
double keep_fraction(std::int64_t num_nodes, std::int64_t adjacency_entries);
// The sampled subgraph of `g` (same vertices and weights).
LocalGraph sample_edges(const LocalGraph& g, double keep, std::uint64_t seed);

// Collective over `mpi_comm` (a pointer to the MPI_Comm of `ranks` ranks, from
// Collectives::native_mpi_comm): the part of each local vertex. Deterministic for (graph,
// seed, number of ranks): Scotch's generator is re-seeded before the call. IoError naming
// `context` when PT-Scotch fails.
std::vector<PartId> ptscotch_assignment(LocalGraph& g, int num_parts, double imbalance, std::uint64_t seed,
                                        const void* mpi_comm, int ranks, const std::string& context);

}  // namespace dpgnn::partition::detail
