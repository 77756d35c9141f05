// Checksums of a partition file's /partition group (util/integrity.h): one table per array
// and a digest over the group's attributes and the tables, stored as the group's attribute
// integrity_checksum. Shared by the writer and PartitionFile (private to src/partition).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "dpgnn/partition/partition_writer.h"
#include "dpgnn/util/hdf5.h"
#include "dpgnn/util/integrity.h"

namespace dpgnn::partition::detail {

inline const std::string kPartitionGroup = "/partition";

// The arrays of /partition with their element type's byte size, in digest order.
inline const std::vector<std::string>& partition_arrays() {
  static const std::vector<std::string> a{"/partition/part_of",    "/partition/new_to_old", "/partition/part_offsets",
                                          "/partition/part_nodes", "/partition/part_edges", "/partition/part_train_nodes"};
  return a;
}

// Digest of the group's attributes (read back from the file) and the tables.
// The group's attributes (docs/partitioning.md); `method` as recorded ("metis", "random",
// "ptscotch"). Shared by the single-process and the distributed writer.
inline void write_partition_attributes(h5::File& f, const std::string& method, std::int64_t num_parts,
                                       std::uint64_t seed, double imbalance, std::int64_t edge_cut,
                                       std::int64_t undirected_edges, double balance_train_nodes, double balance_edges,
                                       double balance_nodes, const std::string& dataset_checksum,
                                       const std::string& dataset_name) {
  const std::string& g = kPartitionGroup;
  f.set_attr(g, "format", std::string(kPartitionFormat));
  f.set_attr(g, "format_version", kPartitionFormatVersion);
  f.set_attr(g, "num_parts", num_parts);
  f.set_attr(g, "method", method);
  f.set_attr(g, "seed", static_cast<std::int64_t>(seed));  // bit pattern of the uint64 seed
  f.set_attr(g, "imbalance", imbalance);
  f.set_attr(g, "edge_cut", edge_cut);
  f.set_attr(g, "undirected_edges", undirected_edges);
  f.set_attr(g, "balance", std::max(balance_train_nodes, balance_edges));
  f.set_attr(g, "balance_train_nodes", balance_train_nodes);
  f.set_attr(g, "balance_edges", balance_edges);
  f.set_attr(g, "balance_nodes", balance_nodes);
  f.set_attr(g, "dataset_checksum", dataset_checksum);
  f.set_attr(g, "dataset_name", dataset_name);
}

inline std::string partition_digest(const h5::File& f, const std::map<std::string, integrity::Table>& tables) {
  const std::string& g = kPartitionGroup;
  integrity::Digest d;
  for (const char* a : {"format", "method", "dataset_checksum", "dataset_name"}) d.add(a, f.attr_string(g, a));
  for (const char* a : {"format_version", "num_parts", "seed", "edge_cut", "undirected_edges"})
    d.add(a, f.attr_int(g, a));
  for (const char* a : {"imbalance", "balance", "balance_train_nodes", "balance_edges", "balance_nodes"})
    d.add(a, f.attr_double(g, a));
  for (const auto& a : partition_arrays()) d.add(a, tables.at(a));
  return d.hex();
}

// Completes the /partition group of `f` (already created, with part_of and new_to_old
// written): the small per-part arrays and their checksum tables, the tables of every array
// (`tables` holds those of part_of and new_to_old, which the caller wrote whole or
// streamed), the attributes and the digest. Shared by the single-process and the distributed
// writer, so that both files verify alike.
inline void finish_partition_group(h5::File& f, const std::string& method, const PartitionOptions& options,
                                   const PartitionQuality& q, const std::vector<std::int64_t>& part_offsets,
                                   const std::string& dataset_checksum, const std::string& dataset_name,
                                   std::map<std::string, integrity::Table> tables) {
  const std::string& g = kPartitionGroup;
  const std::pair<const char*, const std::vector<std::int64_t>*> small[] = {{"/part_offsets", &part_offsets},
                                                                            {"/part_nodes", &q.part_nodes},
                                                                            {"/part_edges", &q.part_edges},
                                                                            {"/part_train_nodes", &q.part_train_nodes}};
  for (const auto& [name, v] : small) {
    f.write_vector<std::int64_t>(g + name, *v);
    tables[g + name] = integrity::table_of(*v, 1, integrity::kBlockRows1d);
  }
  write_partition_attributes(f, method, options.num_parts, options.seed, options.imbalance, q.edge_cut,
                             q.undirected_edges, q.balance_train_nodes, q.balance_edges, q.balance_nodes,
                             dataset_checksum, dataset_name);
  for (const auto& [path, table] : tables) integrity::write_table(f, path, table);
  f.set_attr(g, "integrity_checksum", partition_digest(f, tables));
}

// Removes a partition file's temporary name when the write does not complete (armed until
// the finished file is renamed into place).
struct TempFileGuard {
  std::string path;
  bool armed = true;
  ~TempFileGuard() {
    if (armed) std::remove(path.c_str());
  }
};

}  // namespace dpgnn::partition::detail
