// Partitioning a dataset file into a relabelled partition file. Layout and rationale in
// include/dpgnn/partition/partition_writer.h and docs/partitioning.md.
//
// The partition file is first written complete under a temporary name (DatasetWriter writes
// the relabelled dataset, then the /partition group is added), and only renamed to the
// requested path at the end: an interrupted run never leaves a file that looks finished.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/partition/partition_writer.h"
#include "partition_integrity.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"

namespace dpgnn::partition {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Rows of the relabelled CSR are produced in blocks of about this many entries.
constexpr std::int64_t kIndexBlockEntries = 1 << 22;

template <typename T>
std::vector<T> permute_rows(const std::vector<T>& x, const std::vector<std::int64_t>& new_to_old, std::int64_t width) {
  std::vector<T> out(x.size());
  for (std::size_t i = 0; i < new_to_old.size(); ++i)
    std::copy_n(x.begin() + new_to_old[i] * width, width, out.begin() + static_cast<std::int64_t>(i) * width);
  return out;
}

// Relabelled CSR: row i = sorted old_to_new[neighbours of new_to_old[i]].
void write_relabelled_graph(const graph::CsrGraph& g, const Relabelling& r, graph::DatasetWriter& w) {
  const std::int64_t n = g.num_nodes();
  std::vector<graph::EdgeIdx> indptr(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) indptr[i + 1] = indptr[i] + g.out_degree(r.new_to_old[i]);
  w.write_indptr(indptr);
  std::vector<graph::NodeId> block;
  block.reserve(static_cast<std::size_t>(std::min<std::int64_t>(g.num_edges(), kIndexBlockEntries)) + 1);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::size_t row_begin = block.size();
    for (graph::NodeId v : g.out_neigh(r.new_to_old[i])) block.push_back(static_cast<graph::NodeId>(r.old_to_new[v]));
    std::sort(block.begin() + static_cast<std::ptrdiff_t>(row_begin), block.end());
    if (static_cast<std::int64_t>(block.size()) >= kIndexBlockEntries || i + 1 == n) {
      w.append_indices(block.data(), static_cast<std::int64_t>(block.size()));
      block.clear();
    }
  }
}

// Features in the new order, through a window of new rows [w0, w1) filled by one streaming
// pass over the original rows each (one pass when the matrix fits the window).
void write_permuted_features(const graph::DatasetReader& reader, const Relabelling& r, std::int64_t window_bytes,
                             graph::DatasetWriter& w) {
  const auto& m = reader.meta();
  const std::int64_t n = m.num_nodes, f = m.num_features;
  if (f == 0 || n == 0) return;
  const std::int64_t row_bytes = f * static_cast<std::int64_t>(sizeof(float));
  const std::int64_t window_rows = std::max<std::int64_t>(1, std::min<std::int64_t>(n, window_bytes / row_bytes));
  const std::int64_t read_rows = static_cast<std::int64_t>(graph::kFeatureChunkRows);
  std::vector<float> window(static_cast<std::size_t>(window_rows * f));
  for (std::int64_t w0 = 0; w0 < n; w0 += window_rows) {
    const std::int64_t w1 = std::min(n, w0 + window_rows);
    for (std::int64_t r0 = 0; r0 < n; r0 += read_rows) {
      const std::int64_t r1 = std::min(n, r0 + read_rows);
      bool wanted = false;  // skip reading chunks with no row in this window
      for (std::int64_t old = r0; old < r1 && !wanted; ++old) wanted = r.old_to_new[old] >= w0 && r.old_to_new[old] < w1;
      if (!wanted) continue;
      const std::vector<float> chunk = reader.read_features(r0, r1);  // [r1 - r0, F]
      for (std::int64_t old = r0; old < r1; ++old) {
        const std::int64_t nw = r.old_to_new[old];
        if (nw >= w0 && nw < w1)
          std::copy_n(chunk.begin() + (old - r0) * f, f, window.begin() + (nw - w0) * f);
      }
    }
    w.append_feature_rows(window.data(), w1 - w0);
  }
}

}  // namespace

Relabelling make_relabelling(const std::vector<PartId>& part_of, int num_parts) {
  const auto n = static_cast<std::int64_t>(part_of.size());
  Relabelling r;
  r.part_offsets.assign(static_cast<std::size_t>(num_parts) + 1, 0);
  for (PartId p : part_of) {
    if (p < 0 || p >= num_parts)
      throw std::invalid_argument("make_relabelling: part " + std::to_string(p) + " outside [0, " +
                                  std::to_string(num_parts) + ")");
    ++r.part_offsets[p + 1];
  }
  for (int p = 0; p < num_parts; ++p) r.part_offsets[p + 1] += r.part_offsets[p];
  std::vector<std::int64_t> fill(r.part_offsets.begin(), r.part_offsets.end() - 1);
  r.new_to_old.resize(static_cast<std::size_t>(n));
  r.old_to_new.resize(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) {
    const std::int64_t nw = fill[part_of[v]]++;
    r.new_to_old[nw] = v;
    r.old_to_new[v] = nw;
  }
  return r;
}

PartitionReport partition_dataset(const std::string& dataset_path, const std::string& out_path,
                                  const PartitionOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out_path, ec) && !options.overwrite)
    throw UsageError("--out: " + out_path + " exists (pass --force to overwrite it)");
  if (fs::exists(out_path, ec) && fs::equivalent(out_path, dataset_path, ec))
    throw UsageError("--out: " + out_path + " is the input dataset itself");

  PartitionReport rep;
  rep.method = to_string(options.method);
  auto t = Clock::now();
  const graph::DatasetReader reader(dataset_path);
  const graph::DatasetMeta& meta = reader.meta();
  const std::int64_t n = meta.num_nodes;
  check_num_parts(options.num_parts, n, dataset_path);
  if (options.method == Method::metis) check_metis_limits(n, 0, dataset_path);
  if (!(options.imbalance >= 0.001 && options.imbalance <= 10.0))
    throw UsageError("--imbalance " + std::to_string(options.imbalance) + " must lie in [0.001, 10]");
  const graph::CsrGraph g = reader.read_graph();
  const std::vector<std::uint8_t> train = reader.read_mask("train", 0, n);
  rep.dataset_checksum = meta.checksum;
  rep.num_nodes = n;
  rep.num_edges = g.num_edges();
  rep.seconds_read = seconds_since(t);

  t = Clock::now();
  std::vector<PartId> part_of;
  if (options.method == Method::metis) {
    MetisOptions mo;
    mo.num_parts = options.num_parts;
    mo.imbalance = options.imbalance;
    mo.seed = options.seed;
    part_of = metis_assignment(g, train, mo, dataset_path);
  } else {
    part_of = random_assignment(n, options.num_parts, options.seed);
  }
  rep.seconds_assign = seconds_since(t);
  spdlog::info("partition: {} assignment of {} nodes into {} parts in {:.2f} s", to_string(options.method), n,
               options.num_parts, rep.seconds_assign);

  t = Clock::now();
  rep.quality = evaluate_partition(g, train, part_of, options.num_parts);
  const Relabelling r = make_relabelling(part_of, options.num_parts);

  // The relabelled dataset, written complete under a temporary name.
  detail::TempFileGuard tmp{out_path + ".partial-" + std::to_string(::getpid())};
  graph::DatasetMeta out_meta = meta;
  out_meta.source = "partition of " + (meta.source.empty() ? meta.name : meta.source) + " into " +
                    std::to_string(options.num_parts) + " parts (" + to_string(options.method) + ", seed " +
                    std::to_string(options.seed) + ")";
  {
    graph::DatasetWriter w(tmp.path, out_meta);
    write_relabelled_graph(g, r, w);
    write_permuted_features(reader, r, options.feature_window_bytes, w);
    if (meta.multilabel)
      w.write_label_matrix(permute_rows(reader.read_label_matrix(0, n), r.new_to_old, meta.num_classes));
    else
      w.write_labels(permute_rows(reader.read_labels(0, n), r.new_to_old, 1));
    w.write_masks(permute_rows(train, r.new_to_old, 1), permute_rows(reader.read_mask("val", 0, n), r.new_to_old, 1),
                  permute_rows(reader.read_mask("test", 0, n), r.new_to_old, 1));
    if (!meta.label_names.empty()) w.write_label_names(meta.label_names);
    rep.checksum = w.finish();
  }

  // The /partition group.
  {
    h5::File f = h5::File::open_readwrite(tmp.path);
    const std::string grp = "/partition";
    f.create_group(grp);
    f.write_vector<std::int32_t>(grp + "/part_of", part_of);
    f.write_vector<std::int64_t>(grp + "/new_to_old", r.new_to_old);
    detail::finish_partition_group(f, to_string(options.method), options, rep.quality, r.part_offsets, meta.checksum,
                                   meta.name,
                                   {{"/partition/part_of", integrity::table_of(part_of, 1, integrity::kBlockRows1d)},
                                    {"/partition/new_to_old", integrity::table_of(r.new_to_old, 1, integrity::kBlockRows1d)}});
    f.close();
  }
  fs::rename(tmp.path, out_path, ec);
  if (ec) throw IoError(out_path + ": cannot move the finished partition file into place: " + ec.message());
  tmp.armed = false;
  rep.seconds_write = seconds_since(t);
  return rep;
}

}  // namespace dpgnn::partition
