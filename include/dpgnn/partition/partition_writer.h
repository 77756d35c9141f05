// Writes a partition file: the dataset relabelled so that each part is a contiguous id range,
// plus a /partition group describing the assignment (docs/partitioning.md is the spec).
//
// The file IS a dpgnn dataset (written with graph::DatasetWriter, so `dpgnn info` and
// graph::load_and_validate accept it): new id = position in the order "part 0's nodes in
// original-id order, then part 1's, ...". A rank owning parts [a, b) therefore reads its CSR
// rows, features, labels and masks with one hyperslab each (DESIGN.md "shape of one run").
//
//   /partition          attributes: format="dpgnn-partition", format_version, num_parts,
//                       method, seed, imbalance, edge_cut, undirected_edges, balance,
//                       balance_train_nodes, balance_edges, balance_nodes,
//                       dataset_checksum (the ORIGINAL dataset's checksum), dataset_name
//   /partition/part_of         int32 [N]    part of each ORIGINAL node id
//   /partition/new_to_old      int64 [N]    original id of each new id
//   /partition/part_offsets    int64 [P+1]  new ids of part p: [offsets[p], offsets[p+1])
//   /partition/part_nodes, part_edges, part_train_nodes   int64 [P]
//
// Memory: the original CSR, the assignment and METIS's working set; the relabelled CSR is
// streamed in row blocks and features are permuted through a bounded window (several
// passes over the input when the feature matrix is larger than the window).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dpgnn/partition/assignment.h"

namespace dpgnn::partition {

constexpr const char* kPartitionFormat = "dpgnn-partition";
constexpr std::int64_t kPartitionFormatVersion = 1;

// The relabelling induced by an assignment.
struct Relabelling {
  std::vector<std::int64_t> new_to_old;    // [N]
  std::vector<std::int64_t> old_to_new;    // [N]
  std::vector<std::int64_t> part_offsets;  // [P+1]
};
// Stable counting sort of the nodes by part: part 0's nodes in original-id order first.
Relabelling make_relabelling(const std::vector<PartId>& part_of, int num_parts);

struct PartitionOptions {
  Method method = Method::metis;
  int num_parts = 1;
  std::uint64_t seed = 0;
  double imbalance = 0.05;
  bool overwrite = false;                        // --force
  std::int64_t feature_window_bytes = 1LL << 30;  // permutation buffer for the feature matrix
};

struct PartitionReport {
  PartitionQuality quality;
  std::string dataset_checksum;  // of the input
  std::string checksum;          // content checksum of the written (relabelled) dataset
  std::int64_t num_nodes = 0, num_edges = 0;
  double seconds_read = 0, seconds_assign = 0, seconds_write = 0;
  std::string method;                       // as recorded in the file: metis, random or ptscotch
  std::vector<std::int64_t> rank_peak_rss;  // distributed runs: peak RSS (bytes) of each rank, at rank 0
};

// Partitions `dataset_path` and writes `out_path` (via a temporary file renamed at the end;
// an existing `out_path` is refused unless options.overwrite).
PartitionReport partition_dataset(const std::string& dataset_path, const std::string& out_path,
                                  const PartitionOptions& options);

}  // namespace dpgnn::partition
