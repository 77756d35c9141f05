// Partition file reader and the single-part view of a dataset. See
// include/dpgnn/partition/partition_file.h.
#include "dpgnn/partition/partition_file.h"

#include <numeric>

#include "dpgnn/partition/partition_writer.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"
#include "partition_integrity.h"

namespace dpgnn::partition {

namespace {

const std::string kGroup = "/partition";

std::vector<std::int64_t> read_checked_1d(const h5::File& f, const std::string& name, std::uint64_t expected,
                                          const std::map<std::string, integrity::Table>& tables) {
  const std::string p = kGroup + "/" + name;
  if (!f.exists(p)) throw DataError(f.path(), p, "missing (the partition file is incomplete)");
  auto ds = f.open_dataset(p);
  const auto shape = ds.shape();
  if (shape.size() != 1 || shape[0] != expected)
    throw DataError(f.path(), p, "must be one-dimensional with " + std::to_string(expected) + " entries");
  if (!ds.is_integer()) throw DataError(f.path(), p, "must hold integers");
  return integrity::read_rows_verified<std::int64_t>(f, p, tables.at(p), 0, expected);
}

void check_shape(const h5::File& f, const std::string& name, std::uint64_t expected) {
  const std::string p = kGroup + "/" + name;
  if (!f.exists(p)) throw DataError(f.path(), p, "missing (the partition file is incomplete)");
  auto ds = f.open_dataset(p);
  const auto shape = ds.shape();
  if (shape.size() != 1 || shape[0] != expected || !ds.is_integer())
    throw DataError(f.path(), p, "must be a one-dimensional integer array with " + std::to_string(expected) + " entries");
}

}  // namespace

PartitionFile PartitionFile::open(const std::string& path) {
  PartitionFile pf;
  pf.path_ = path;
  pf.meta_ = graph::DatasetReader(path).meta();
  const h5::File f = h5::File::open_read(path);
  if (!f.exists(kGroup))
    throw DataError(path, kGroup,
                    "missing: this is a dataset file, not a partition file (create one with `dpgnn partition "
                    "--dataset " + path + " --parts P --out PART.h5`)");
  auto need_attr = [&](const char* name) {
    if (!f.has_attr(kGroup, name)) throw DataError(path, kGroup, std::string("attribute '") + name + "' is missing");
  };
  for (const char* a : {"format", "format_version", "num_parts", "method", "seed", "imbalance", "edge_cut",
                        "dataset_checksum", "dataset_name"})
    need_attr(a);
  if (f.attr_string(kGroup, "format") != kPartitionFormat)
    throw DataError(path, kGroup + " attribute 'format'", std::string("must be '") + kPartitionFormat + "'");
  const std::int64_t version = f.attr_int(kGroup, "format_version");
  if (version != kPartitionFormatVersion)
    throw DataError(path, kGroup + " attribute 'format_version'",
                    "version " + std::to_string(version) + " is not supported (this dpgnn reads version " +
                        std::to_string(kPartitionFormatVersion) + ")");
  const std::int64_t parts = f.attr_int(kGroup, "num_parts");
  const std::int64_t n = pf.meta_.num_nodes;
  if (parts < 1 || parts > std::max<std::int64_t>(n, 1))
    throw DataError(path, kGroup + " attribute 'num_parts'",
                    std::to_string(parts) + " outside [1, " + std::to_string(n) + "] (the number of nodes)");
  pf.method_ = f.attr_string(kGroup, "method");
  pf.seed_ = static_cast<std::uint64_t>(f.attr_int(kGroup, "seed"));
  pf.imbalance_ = f.attr_double(kGroup, "imbalance");
  pf.edge_cut_ = f.attr_int(kGroup, "edge_cut");
  pf.dataset_checksum_ = f.attr_string(kGroup, "dataset_checksum");
  pf.dataset_name_ = f.attr_string(kGroup, "dataset_name");
  if (pf.dataset_checksum_.empty()) throw DataError(path, kGroup + " attribute 'dataset_checksum'", "is empty");

  const auto p = static_cast<std::uint64_t>(parts);
  check_shape(f, "new_to_old", static_cast<std::uint64_t>(n));
  check_shape(f, "part_of", static_cast<std::uint64_t>(n));
  // Checksum tables of the group's arrays and the digest over them and the attributes.
  if (!f.has_attr(kGroup, "integrity_checksum") || !integrity::has_tables(f))
    throw DataError(path, kGroup + " attribute 'integrity_checksum'",
                    "is missing: the partition file was written by an older dpgnn without checksums (re-run `dpgnn "
                    "partition` to write a verifiable one)");
  const std::map<std::string, std::uint64_t> rows = {
      {"/partition/part_of", n},        {"/partition/new_to_old", n},       {"/partition/part_offsets", p + 1},
      {"/partition/part_nodes", p},     {"/partition/part_edges", p},       {"/partition/part_train_nodes", p}};
  for (const auto& a : detail::partition_arrays()) pf.tables_[a] = integrity::read_table(f, a, rows.at(a));
  if (f.attr_string(kGroup, "integrity_checksum") != detail::partition_digest(f, pf.tables_))
    throw DataError(path, kGroup + " attribute 'integrity_checksum'",
                    "does not match the group's attributes and checksum tables: the partition file is corrupt or "
                    "was modified after it was written");
  pf.part_offsets_ = read_checked_1d(f, "part_offsets", p + 1, pf.tables_);
  pf.part_nodes_ = read_checked_1d(f, "part_nodes", p, pf.tables_);
  pf.part_edges_ = read_checked_1d(f, "part_edges", p, pf.tables_);
  pf.part_train_nodes_ = read_checked_1d(f, "part_train_nodes", p, pf.tables_);
  const auto& off = pf.part_offsets_;
  if (off.front() != 0 || off.back() != n)
    throw DataError(path, kGroup + "/part_offsets", "must run from 0 to the number of nodes (" + std::to_string(n) + ")");
  for (std::uint64_t i = 0; i < p; ++i) {
    if (off[i + 1] < off[i]) throw DataError(path, kGroup + "/part_offsets", "decreases at part " + std::to_string(i));
    if (pf.part_nodes_[i] != off[i + 1] - off[i])
      throw DataError(path, kGroup + "/part_nodes",
                      "part " + std::to_string(i) + " has " + std::to_string(pf.part_nodes_[i]) +
                          " nodes but part_offsets gives " + std::to_string(off[i + 1] - off[i]));
  }
  if (std::accumulate(pf.part_edges_.begin(), pf.part_edges_.end(), std::int64_t{0}) != pf.meta_.num_edges)
    throw DataError(path, kGroup + "/part_edges", "does not sum to the number of CSR entries (" +
                                                      std::to_string(pf.meta_.num_edges) + ")");
  return pf;
}

PartitionFile PartitionFile::from_dataset(const std::string& dataset_path) {
  PartitionFile pf;
  pf.path_ = dataset_path;
  pf.single_ = true;
  const graph::DatasetReader reader(dataset_path);
  pf.meta_ = reader.meta();
  const std::int64_t n = pf.meta_.num_nodes;
  pf.part_offsets_ = {0, n};
  pf.part_nodes_ = {n};
  pf.part_edges_ = {pf.meta_.num_edges};
  const auto train = reader.read_mask("train", 0, n);
  pf.part_train_nodes_ = {std::accumulate(train.begin(), train.end(), std::int64_t{0})};
  pf.dataset_checksum_ = pf.meta_.checksum;
  pf.dataset_name_ = pf.meta_.name;
  pf.method_ = "none";
  return pf;
}

PartitionFile PartitionFile::open_or_single(const std::string& partition_path, const std::string& dataset_path) {
  if (partition_path.empty()) return from_dataset(dataset_path);
  PartitionFile pf = open(partition_path);
  pf.check_matches_dataset(dataset_path);
  return pf;
}

std::vector<std::int64_t> PartitionFile::read_new_to_old(std::int64_t begin, std::int64_t end) const {
  const std::int64_t n = num_nodes();
  if (begin < 0 || end < begin || end > n)
    throw std::invalid_argument("read_new_to_old: range [" + std::to_string(begin) + ", " + std::to_string(end) +
                                ") outside [0, " + std::to_string(n) + "]");
  std::vector<std::int64_t> ids(static_cast<std::size_t>(end - begin));
  if (single_) {
    std::iota(ids.begin(), ids.end(), begin);
    return ids;
  }
  const h5::File f = h5::File::open_read(path_);
  ids = integrity::read_rows_verified<std::int64_t>(f, kGroup + "/new_to_old", tables_.at(kGroup + "/new_to_old"),
                                                    static_cast<std::uint64_t>(begin), static_cast<std::uint64_t>(end));
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= n)
      throw DataError(path_, kGroup + "/new_to_old",
                      "entry " + std::to_string(begin + static_cast<std::int64_t>(i)) + " = " + std::to_string(ids[i]) +
                          " is out of range [0, " + std::to_string(n) + ")");
  return ids;
}

std::vector<std::int32_t> PartitionFile::part_of() const {
  if (single_) return std::vector<std::int32_t>(static_cast<std::size_t>(num_nodes()), 0);
  const h5::File f = h5::File::open_read(path_);
  auto p = integrity::read_rows_verified<std::int32_t>(f, kGroup + "/part_of", tables_.at(kGroup + "/part_of"), 0,
                                                       static_cast<std::uint64_t>(num_nodes()));
  for (std::size_t v = 0; v < p.size(); ++v)
    if (p[v] < 0 || p[v] >= num_parts())
      throw DataError(path_, kGroup + "/part_of",
                      "node " + std::to_string(v) + " has part " + std::to_string(p[v]) + ", outside [0, " +
                          std::to_string(num_parts()) + ")");
  return p;
}

void PartitionFile::check_matches_dataset(const std::string& dataset_path) const {
  const std::string actual = graph::DatasetReader(dataset_path).meta().checksum;
  if (actual != dataset_checksum_)
    throw DataError(path_ + ": this partition was made from a dataset with checksum " + dataset_checksum_ + ", but " +
                    dataset_path + " has checksum " + actual +
                    " (the dataset changed since it was partitioned, or it is another dataset): re-run `dpgnn "
                    "partition` on " + dataset_path);
}

}  // namespace dpgnn::partition
