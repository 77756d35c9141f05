// Reading a partition file (written by partition_dataset; layout in partition_writer.h and
// docs/partitioning.md), or viewing a plain dataset file as a 1-part partition.
//
// Opening checks that the file is a dpgnn dataset with a well-formed /partition group
// (DataError naming the file and the offending path otherwise), checks the group's digest
// over its attributes and checksum tables (util/integrity.h; every read of its arrays is
// checked against the tables, block by block) and loads the small arrays
// (offsets, per-part counts). The per-node arrays (new_to_old, part_of) are read on demand,
// by range, so a rank never holds more than its own slice.
//
// A partition is tied to the exact dataset it was made from by the dataset's content
// checksum: check_matches_dataset refuses a stale partition (DESIGN.md 6: the number of
// parts is a property of the prepared dataset).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/util/integrity.h"

namespace dpgnn::partition {

class PartitionFile {
 public:
  // A partition file; DataError when `path` is a dataset without /partition or the group
  // is malformed, IoError when it cannot be read.
  static PartitionFile open(const std::string& path);
  // The dataset file itself as a 1-part partition: offsets {0, N}, identity new_to_old,
  // dataset_checksum = its own checksum.
  static PartitionFile from_dataset(const std::string& dataset_path);
  // `partition_path` when not empty (opened and checked against `dataset_path`), else the
  // dataset itself as one part. What `dpgnn sample` and the trainer call.
  static PartitionFile open_or_single(const std::string& partition_path, const std::string& dataset_path);

  const std::string& path() const { return path_; }
  // True for from_dataset (no /partition group; ids are the dataset's own).
  bool is_single_part_view() const { return single_; }
  // Metadata of the file as a dataset (relabelled ids).
  const graph::DatasetMeta& meta() const { return meta_; }
  std::int64_t num_nodes() const { return meta_.num_nodes; }
  int num_parts() const { return static_cast<int>(part_offsets_.size()) - 1; }
  const std::vector<std::int64_t>& part_offsets() const { return part_offsets_; }  // [P+1]
  const std::vector<std::int64_t>& part_nodes() const { return part_nodes_; }      // [P]
  const std::vector<std::int64_t>& part_edges() const { return part_edges_; }      // [P]
  const std::vector<std::int64_t>& part_train_nodes() const { return part_train_nodes_; }  // [P]
  const std::string& dataset_checksum() const { return dataset_checksum_; }
  const std::string& dataset_name() const { return dataset_name_; }
  const std::string& method() const { return method_; }  // "metis", "random" or "none"
  std::uint64_t seed() const { return seed_; }
  double imbalance() const { return imbalance_; }
  std::int64_t edge_cut() const { return edge_cut_; }

  // Original dataset id of new ids [begin, end) (identity for the single-part view).
  std::vector<std::int64_t> read_new_to_old(std::int64_t begin, std::int64_t end) const;
  std::vector<std::int64_t> new_to_old() const { return read_new_to_old(0, num_nodes()); }  // [N]
  std::vector<std::int32_t> part_of() const;  // [N] part of each original id

  // DataError naming both files and both checksums when this partition was not made from
  // the dataset at `dataset_path` (its checksum attribute differs from dataset_checksum).
  void check_matches_dataset(const std::string& dataset_path) const;

 private:
  PartitionFile() = default;
  std::string path_;
  bool single_ = false;
  graph::DatasetMeta meta_;
  std::vector<std::int64_t> part_offsets_, part_nodes_, part_edges_, part_train_nodes_;
  std::string dataset_checksum_, dataset_name_, method_;
  std::uint64_t seed_ = 0;
  double imbalance_ = 0;
  std::int64_t edge_cut_ = 0;
  std::map<std::string, integrity::Table> tables_;  // checksum tables of /partition's arrays
};

}  // namespace dpgnn::partition
