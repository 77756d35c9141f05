// A rank's shard of a partitioned dataset: the rows of the parts it owns, read with one
// hyperslab per array, plus what training and full-neighbourhood evaluation need.
//
// Parts are a property of the prepared dataset (DESIGN.md 6): rank r of W owns the
// contiguous block of parts [r*P/W, (r+1)*P/W), so its nodes are the contiguous new-id range
// [part_offsets[first], part_offsets[last]). Samplers run per PART on the part's training
// graph, which keeps only edges inside the part: the subgraph set is then the same whether
// 1, 2 or 4 ranks hold the parts, which is what makes runs with different rank counts give
// the same model.
//
// Training graph of a part (part-local ids 0..n_part-1 = global id - part begin):
//   transductive: every node of the part, and the edges between them;
//   inductive:    only edges between TRAINING nodes of the part; the other nodes stay as
//                 isolated rows so that local ids remain "global id - part begin"
//                 (Ayle et al. 2022 and DESIGN.md 4: walks pass through nodes of the
//                 training graph only, and an isolated non-training node is never a root).
// Edges leaving the part are dropped for training (each rank samples only its own nodes).
//
// Evaluation uses the full neighbourhood: `rows` holds the complete CSR rows of the local
// nodes with global neighbour ids, and `halo[q]` lists the neighbours owned by rank q
// (sorted global ids) with their global degrees, so the trainer knows what to exchange. A
// shard involves no communication: every rank's shard can be loaded in one process.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dpgnn/graph/csr_graph.h"
#include "dpgnn/graph/dataset.h"
#include "dpgnn/partition/partition_file.h"

namespace dpgnn::partition {

// Parts [first, second) owned by `rank` of `world_size`. UsageError when world_size >
// num_parts (naming both numbers: every rank needs at least one part) or rank is invalid.
std::pair<int, int> parts_for_rank(int rank, int world_size, int num_parts);

// One owned part's training graph, in part-local ids.
struct PartGraph {
  int part = 0;
  std::int64_t begin = 0, end = 0;  // global (new) id range of the part
  graph::CsrGraph graph;            // [n_part rows], part-local neighbour ids
};

// Remote neighbours owned by one rank.
struct HaloGroup {
  int rank = 0;
  std::vector<std::int64_t> nodes;    // sorted global (new) ids
  std::vector<std::int64_t> degrees;  // global degree (CSR row length) of each
};

struct ShardOptions {
  bool load_features = true;  // `dpgnn sample` does not need them
};

struct Shard {
  std::string file;              // the partition (or dataset) file read
  std::string dataset_checksum;  // checksum of the dataset the ids refer to
  graph::DatasetMeta meta;       // of that file
  int rank = 0, world_size = 1, num_parts = 1;
  int first_part = 0, last_part = 1;               // owned parts [first_part, last_part)
  std::vector<std::int64_t> part_offsets;          // [P+1] global, all parts
  std::vector<std::int64_t> rank_offsets;          // [W+1] global id range of each rank
  std::int64_t begin = 0, end = 0;                 // global (new) id range of this rank

  std::int64_t num_local() const { return end - begin; }
  bool owns(std::int64_t global_id) const { return global_id >= begin && global_id < end; }
  // The rank owning a global id (binary search in rank_offsets).
  int owner_of(std::int64_t global_id) const;

  graph::CsrGraph rows;                      // [n_local rows], global neighbour ids (num_cols = N)
  std::vector<std::int64_t> degrees;         // [n_local] global degree of each local node
  std::vector<float> features;               // [n_local, F] (empty when not loaded or F = 0)
  std::vector<std::int64_t> labels;          // [n_local] (single-label)
  std::vector<std::uint8_t> label_matrix;    // [n_local, C] (multi-label)
  std::vector<std::uint8_t> train_mask, val_mask, test_mask;  // [n_local]
  std::vector<std::int64_t> new_to_old;      // [n_local] dataset id of each local node

  std::vector<PartGraph> training_graphs;    // one per owned part, in part order
  std::vector<HaloGroup> halo;               // [W]; halo[rank] is empty
};

Shard load_shard(const PartitionFile& partition, int rank, int world_size, const ShardOptions& options = {});
// Opens `partition_path` (PartitionFile::open) and loads the shard.
Shard load_shard(const std::string& partition_path, int rank, int world_size, const ShardOptions& options = {});

// The training graph of the rows [0, n) of a part given with global neighbour ids: entries
// whose neighbour lies in [part_begin, part_begin + n) (and, for inductive, both ends are
// training nodes), relabelled to part-local ids. Exposed for tests and samplers.
graph::CsrGraph part_training_graph(const graph::CsrGraph& part_rows, std::int64_t part_begin,
                                    const std::vector<std::uint8_t>& part_train_mask, graph::Setting setting);

}  // namespace dpgnn::partition
