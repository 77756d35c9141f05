// Distributed partitioning with PT-Scotch and the rank-0 streaming writer. Layout and
// rationale in include/dpgnn/partition/distributed_partition.h and docs/partitioning.md.
//
// The stages, each collective over the command's dist::Collectives (host buffers; no MPI
// here: dist moves the bytes, and hands PT-Scotch its MPI communicator):
//   read_my_rows -> build_distributed_graph -> assign_parts -> relabel -> exchange_ghost_ids
//   -> write_dataset / write_partition_group -> finish.
#include "dpgnn/partition/distributed_partition.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>
#include <type_traits>

#include "dpgnn/dist/collectives.h"
#include "dpgnn/graph/dataset.h"
#include "dpgnn/util/collective.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"
#include "dpgnn/util/integrity.h"
#include "dpgnn/util/system.h"
#include "partition_integrity.h"
#include "scotch_assignment.h"

namespace dpgnn::partition {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Pieces streamed to the writer are at most this large (bounded buffers on every rank).
constexpr std::int64_t kChunkBytes = std::int64_t{16} << 20;

struct World {
  const dist::Collectives& comms;
  int rank = 0, size = 1;
};

// Runs `fn` on every rank (util/collective.h): an error every rank meets alike becomes one
// CollectiveError reported by rank 0.
template <class Fn>
void on_every_rank(const World& w, Fn&& fn) {
  dpgnn::on_every_rank(
      w.rank, w.size,
      [&](std::int64_t failed) {
        w.comms.allreduce_sum(&failed, 1);
        return failed;
      },
      std::forward<Fn>(fn));
}

std::int64_t allreduce_sum(const World& w, std::int64_t x) {
  w.comms.allreduce_sum(&x, 1);
  return x;
}

std::vector<std::size_t> as_sizes(const std::vector<std::int64_t>& counts) {
  return std::vector<std::size_t>(counts.begin(), counts.end());
}

// All-to-all of variable-sized pieces: send_counts[q] elements of `send` (in rank order) go
// to rank q; returns what arrives, in rank order, and its counts.
template <typename T>
std::vector<T> alltoallv(const World& w, const std::vector<T>& send, const std::vector<std::int64_t>& send_counts,
                         std::vector<std::int64_t>& recv_counts) {
  recv_counts.assign(static_cast<std::size_t>(w.size), 0);
  const std::vector<std::size_t> one_each(static_cast<std::size_t>(w.size), 1);
  w.comms.alltoallv(send_counts.data(), one_each, recv_counts.data(), one_each);
  std::int64_t total = 0;
  for (std::int64_t c : recv_counts) total += c;
  std::vector<T> recv(static_cast<std::size_t>(total));
  w.comms.alltoallv(send.data(), as_sizes(send_counts), recv.data(), as_sizes(recv_counts));
  return recv;
}

int owner_of(const std::vector<std::int64_t>& blocks, std::int64_t v) {
  return static_cast<int>(std::upper_bound(blocks.begin(), blocks.end(), v) - blocks.begin()) - 1;
}

// This rank's block of the symmetrised graph without self-loops and repeats: its own entries
// plus the reverse (v, u) of every entry (u, v) stored on other rows, which one all-to-all
// brings to v's owner. Works for directed datasets and does not trust an undirected one's
// symmetry.
detail::LocalGraph symmetric_block(const World& w, const graph::CsrGraph& rows, std::int64_t b0,
                                   const std::vector<std::int64_t>& blocks) {
  const std::int64_t n = rows.num_nodes();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(w.size), 0);
  for (std::int64_t u = 0; u < n; ++u)
    for (graph::NodeId v : rows.out_neigh(u))
      if (v != b0 + u) counts[owner_of(blocks, v)] += 2;
  std::vector<std::int64_t> pos(static_cast<std::size_t>(w.size), 0);
  for (int q = 1; q < w.size; ++q) pos[q] = pos[q - 1] + counts[q - 1];
  std::vector<std::int32_t> send(static_cast<std::size_t>(pos.back() + counts.back()));
  for (std::int64_t u = 0; u < n; ++u)
    for (graph::NodeId v : rows.out_neigh(u)) {
      if (v == b0 + u) continue;
      auto& p = pos[owner_of(blocks, v)];
      send[p++] = v;  // (target row, neighbour): the reverse entry
      send[p++] = static_cast<std::int32_t>(b0 + u);
    }
  std::vector<std::int64_t> recv_counts;
  std::vector<std::int32_t> recv = alltoallv(w, send, counts, recv_counts);
  send = {};
  detail::LocalGraph g;
  g.begin = b0;
  g.xadj.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t u = 0; u < n; ++u)
    for (graph::NodeId v : rows.out_neigh(u))
      if (v != b0 + u) ++g.xadj[u + 1];
  for (std::size_t i = 0; i < recv.size(); i += 2) ++g.xadj[recv[i] - b0 + 1];
  for (std::int64_t u = 0; u < n; ++u) g.xadj[u + 1] += g.xadj[u];
  g.adjncy.resize(static_cast<std::size_t>(g.xadj[n]));
  std::vector<std::int64_t> fill(g.xadj.begin(), g.xadj.end() - 1);
  for (std::int64_t u = 0; u < n; ++u)
    for (graph::NodeId v : rows.out_neigh(u))
      if (v != b0 + u) g.adjncy[fill[u]++] = v;
  for (std::size_t i = 0; i < recv.size(); i += 2) g.adjncy[fill[recv[i] - b0]++] = recv[i + 1];
  recv = {};
  // Sort each row, drop repeats, compact in place.
  std::int64_t out = 0;
  for (std::int64_t u = 0; u < n; ++u) {
    auto b = g.adjncy.begin() + g.xadj[u], e = g.adjncy.begin() + g.xadj[u + 1];
    std::sort(b, e);
    e = std::unique(b, e);
    const std::int64_t start = out;
    for (auto it = b; it != e; ++it) g.adjncy[out++] = *it;
    g.xadj[u] = start;
  }
  g.xadj[n] = out;
  g.adjncy.resize(static_cast<std::size_t>(out));
  g.adjncy.shrink_to_fit();
  return g;
}

// Moves `rows` rows of `width` Ts from rank `src` to rank 0 in bounded pieces: `fill(buf,
// r0, k)` produces rows [r0, r0 + k) at src, `sink(buf, k)` consumes them at rank 0. Every
// rank calls it in the same order; ranks other than src and 0 return at once. Blocking
// sends are safe: rank 0 receives the pieces in exactly the order the ranks send them.
template <typename T, class Fill, class Sink>
void move_rows(const World& w, int src, std::int64_t rows, std::int64_t width, Fill&& fill, Sink&& sink) {
  if (w.rank != src && w.rank != 0) return;
  if (rows == 0) return;
  const auto row_bytes = static_cast<std::int64_t>(std::max<std::int64_t>(1, width) * sizeof(T));
  const std::int64_t chunk = std::max<std::int64_t>(1, kChunkBytes / row_bytes);
  std::vector<T> buf(static_cast<std::size_t>(std::min(rows, chunk) * width));
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::int64_t k = std::min(chunk, rows - r0);
    const auto count = static_cast<std::size_t>(k * width);
    if (w.rank == src) fill(buf.data(), r0, k);
    if (src != 0) {
      if (w.rank == src)
        w.comms.send(buf.data(), count, 0);
      else
        w.comms.recv(buf.data(), count, src);
    }
    if (w.rank == 0) sink(buf.data(), k);
  }
}

}  // namespace

std::pair<std::int64_t, std::int64_t> input_block(std::int64_t num_nodes, int rank, int world_size) {
  auto at = [&](int r) {
    return static_cast<std::int64_t>(static_cast<__int128>(num_nodes) * r / world_size);
  };
  return {at(rank), at(rank + 1)};
}


namespace {

// ---- read my rows: the checks, and this rank's block of the input ---------------------------

struct MyRows {
  std::optional<graph::DatasetReader> reader;
  graph::DatasetMeta meta;
  graph::CsrGraph rows;              // CSR rows of the original ids [b0, b1)
  std::vector<std::uint8_t> train;   // their training mask
  std::int64_t n = 0, b0 = 0, b1 = 0;
  std::vector<std::int64_t> blocks;  // [W + 1]: rank r reads [blocks[r], blocks[r + 1])
  std::int64_t num_local() const { return b1 - b0; }
};

void check_options(const World& w, const std::string& dataset_path, const std::string& out_path,
                   const PartitionOptions& options) {
  namespace fs = std::filesystem;
  on_every_rank(w, [&] {
    if (options.method != Method::metis)
      throw UsageError(std::string("--method ") + to_string(options.method) +
                       " runs on one process (start `dpgnn partition` without mpiexec, or with -n 1); with " +
                       std::to_string(w.size) + " ranks only the structure-aware method (PT-Scotch) is distributed");
    if (!(options.imbalance >= 0.001 && options.imbalance <= 10.0))
      throw UsageError("--imbalance " + std::to_string(options.imbalance) + " must lie in [0.001, 10]");
    std::error_code ec;
    if (w.rank == 0 && fs::exists(out_path, ec) && !options.overwrite)
      throw UsageError("--out: " + out_path + " exists (pass --force to overwrite it)");
    if (w.rank == 0 && fs::exists(out_path, ec) && fs::equivalent(out_path, dataset_path, ec))
      throw UsageError("--out: " + out_path + " is the input dataset itself");
  });
}

void read_my_rows(const World& w, const std::string& dataset_path, int num_parts, MyRows& m) {
  on_every_rank(w, [&] {
    m.reader.emplace(dataset_path);
    m.n = m.reader->meta().num_nodes;
    check_num_parts(num_parts, m.n, dataset_path);
    std::tie(m.b0, m.b1) = input_block(m.n, w.rank, w.size);
    m.rows = m.reader->read_rows(m.b0, m.b1);
    m.train = m.reader->read_mask("train", m.b0, m.b1);
  });
  m.meta = m.reader->meta();
  m.blocks.resize(static_cast<std::size_t>(w.size) + 1);
  for (int r = 0; r <= w.size; ++r) m.blocks[r] = input_block(m.n, std::min(r, w.size), w.size).first;
  m.blocks[w.size] = m.n;
  if (w.rank == 0)
    spdlog::info("partition: {} ranks, each reading its block of {} (~{} nodes); rank 0 read {} rows, {} entries",
                 w.size, dataset_path, m.n / w.size, m.num_local(), m.rows.num_edges());
}

// ---- build the distributed graph: symmetrised, with PT-Scotch's one vertex weight -----------

detail::LocalGraph build_distributed_graph(const World& w, const MyRows& m) {
  detail::LocalGraph g = symmetric_block(w, m.rows, m.b0, m.blocks);
  const std::int64_t local_train = std::count_if(m.train.begin(), m.train.end(), [](std::uint8_t x) { return x != 0; });
  const std::int64_t total_train = allreduce_sum(w, local_train);
  const std::int64_t ratio = detail::train_weight_ratio(m.n, m.meta.num_edges, total_train);
  g.weights.resize(static_cast<std::size_t>(m.num_local()));
  for (std::int64_t u = 0; u < m.num_local(); ++u)
    g.weights[u] = detail::combined_weight(m.rows.out_degree(u), m.train[u] != 0, ratio);
  return g;
}

// ---- partition: PT-Scotch on a uniform edge sample of the distributed graph -----------------

std::vector<PartId> assign_parts(const World& w, detail::LocalGraph& g, const MyRows& m, const PartitionOptions& options,
                                 const std::string& dataset_path) {
  const int K = options.num_parts;
  if (K == 1) return std::vector<PartId>(static_cast<std::size_t>(m.num_local()), 0);  // nothing to partition
  const std::int64_t sym_entries = allreduce_sum(w, static_cast<std::int64_t>(g.adjncy.size()));
  const double keep = detail::keep_fraction(m.n, sym_entries);
  detail::LocalGraph sample;  // only when something is dropped (keep is the same on every rank)
  if (keep < 1.0) sample = detail::sample_edges(g, keep, options.seed);
  detail::LocalGraph& input = keep < 1.0 ? sample : g;
  const std::int64_t kept = allreduce_sum(w, static_cast<std::int64_t>(input.adjncy.size()));
  if (w.rank == 0)
    spdlog::info("partition: PT-Scotch partitions a uniform sample of {} of {} adjacency entries (keep {:.4f}: "
                 "average degree <= {:.0f})",
                 kept, sym_entries, keep, detail::kScotchSampleDegree);
  return detail::ptscotch_assignment(input, K, options.imbalance, options.seed, w.comms.native_mpi_comm(), w.size,
                                     dataset_path);
}

// ---- relabel: new ids part-major, original order inside a part ------------------------------

struct NewIds {
  // [W * K]: nodes and CSR entries of part p in rank r's block, at r * K + p (W x K numbers, not N).
  std::vector<std::int64_t> counts, edges;
  std::vector<std::int64_t> part_offsets;  // [K + 1]: the first new id of each part
  std::vector<std::int64_t> new_id;        // [n_local]: the new id of each local node
  std::vector<std::int64_t> order, seg;    // local nodes sorted by (part, id); seg[p]: where part p starts
};

NewIds relabel(const World& w, const MyRows& m, const std::vector<PartId>& part, int K, PartitionQuality& q) {
  const std::int64_t nl = m.num_local();
  NewIds ids;
  std::vector<std::int64_t> local_counts(static_cast<std::size_t>(K), 0), local_edges(static_cast<std::size_t>(K), 0);
  std::vector<std::int64_t> local_train_parts(static_cast<std::size_t>(K), 0);
  for (std::int64_t u = 0; u < nl; ++u) {
    ++local_counts[part[u]];
    local_edges[part[u]] += m.rows.out_degree(u);
    local_train_parts[part[u]] += m.train[u] != 0 ? 1 : 0;
  }
  ids.counts.resize(static_cast<std::size_t>(w.size) * K);
  ids.edges.resize(static_cast<std::size_t>(w.size) * K);
  w.comms.allgather(local_counts.data(), ids.counts.data(), static_cast<std::size_t>(K));
  w.comms.allgather(local_edges.data(), ids.edges.data(), static_cast<std::size_t>(K));
  q.part_nodes.assign(static_cast<std::size_t>(K), 0);
  q.part_edges.assign(static_cast<std::size_t>(K), 0);
  for (int r = 0; r < w.size; ++r)
    for (int p = 0; p < K; ++p) {
      q.part_nodes[p] += ids.counts[static_cast<std::size_t>(r) * K + p];
      q.part_edges[p] += ids.edges[static_cast<std::size_t>(r) * K + p];
    }
  q.part_train_nodes = local_train_parts;
  w.comms.allreduce_sum(q.part_train_nodes.data(), static_cast<std::size_t>(K));
  ids.part_offsets.assign(static_cast<std::size_t>(K) + 1, 0);
  for (int p = 0; p < K; ++p) ids.part_offsets[p + 1] = ids.part_offsets[p] + q.part_nodes[p];
  // This rank's nodes of part p get new ids from part_offsets[p] + (part p's nodes on lower ranks).
  std::vector<std::int64_t> next(static_cast<std::size_t>(K));
  for (int p = 0; p < K; ++p) {
    next[p] = ids.part_offsets[p];
    for (int r = 0; r < w.rank; ++r) next[p] += ids.counts[static_cast<std::size_t>(r) * K + p];
  }
  ids.new_id.resize(static_cast<std::size_t>(nl));
  ids.order.resize(static_cast<std::size_t>(nl));
  ids.seg.assign(static_cast<std::size_t>(K) + 1, 0);
  for (int p = 0; p < K; ++p) ids.seg[p + 1] = ids.seg[p] + local_counts[p];
  std::vector<std::int64_t> at(ids.seg.begin(), ids.seg.end() - 1);
  for (std::int64_t u = 0; u < nl; ++u) {
    ids.new_id[u] = next[part[u]]++;
    ids.order[at[part[u]]++] = u;
  }
  return ids;
}

// ---- exchange: new ids of remote neighbours (one all-to-all lookup at their owners), the
// edge cut, and the rows relabelled -------------------------------------------------------------

struct RelabelledRows {
  std::vector<std::int64_t> ptr;   // [n_local + 1], rows in `order`
  std::vector<graph::NodeId> cols; // sorted new ids of each row's neighbours
};

RelabelledRows exchange_ghost_ids(const World& w, const MyRows& m, detail::LocalGraph& g,
                                  const std::vector<PartId>& part, const NewIds& ids, PartitionQuality& q) {
  const std::int64_t nl = m.num_local(), b0 = m.b0, b1 = m.b1;
  // The symmetrised adjacency holds every neighbour of the stored rows except self-loops
  // (local), so its remote ids are all the writer needs.
  std::vector<std::int64_t> ghosts;
  for (std::int64_t v : g.adjncy)
    if (v < b0 || v >= b1) ghosts.push_back(v);
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  ghosts.shrink_to_fit();
  std::vector<std::int64_t> ghost_new;
  {
    std::vector<std::int64_t> ask(static_cast<std::size_t>(w.size), 0), asked_counts;
    for (std::int64_t v : ghosts) ++ask[owner_of(m.blocks, v)];  // sorted ids: grouped by owner already
    std::vector<std::int64_t> asked = alltoallv(w, ghosts, ask, asked_counts);
    for (auto& v : asked) {
      if (v < b0 || v >= b1) throw IoError("partition: internal error: lookup of node " + std::to_string(v) + " at the wrong rank");
      v = ids.new_id[v - b0];
    }
    std::vector<std::int64_t> back_counts;
    ghost_new = alltoallv(w, asked, asked_counts, back_counts);
  }
  auto new_of = [&](std::int64_t v) {
    if (v >= b0 && v < b1) return ids.new_id[v - b0];
    return ghost_new[std::lower_bound(ghosts.begin(), ghosts.end(), v) - ghosts.begin()];
  };
  auto part_of_new = [&](std::int64_t x) {
    return static_cast<int>(std::upper_bound(ids.part_offsets.begin(), ids.part_offsets.end(), x) -
                            ids.part_offsets.begin()) - 1;
  };
  // Edge cut over unordered pairs {u, v}, u != v, stored in either direction (as
  // evaluate_partition counts): each pair once, from its smaller end's symmetrised row.
  std::int64_t cut = 0, undirected = 0;
  for (std::int64_t u = 0; u < nl; ++u)
    for (std::int64_t i = g.xadj[u]; i < g.xadj[u + 1]; ++i) {
      const std::int64_t v = g.adjncy[i];
      if (v <= b0 + u) continue;
      ++undirected;
      if (part_of_new(new_of(v)) != part[u]) ++cut;
    }
  g = {};
  q.edge_cut = allreduce_sum(w, cut);
  q.undirected_edges = allreduce_sum(w, undirected);
  q.balance_nodes = balance_of(q.part_nodes);
  q.balance_train_nodes = balance_of(q.part_train_nodes);
  q.balance_edges = balance_of(q.part_edges);
  RelabelledRows rel;
  rel.ptr.assign(static_cast<std::size_t>(nl) + 1, 0);
  for (std::int64_t i = 0; i < nl; ++i) rel.ptr[i + 1] = rel.ptr[i] + m.rows.out_degree(ids.order[i]);
  rel.cols.resize(static_cast<std::size_t>(rel.ptr[nl]));
  for (std::int64_t i = 0; i < nl; ++i) {
    std::int64_t o = rel.ptr[i];
    for (graph::NodeId v : m.rows.out_neigh(ids.order[i])) rel.cols[o++] = static_cast<graph::NodeId>(new_of(v));
    std::sort(rel.cols.begin() + rel.ptr[i], rel.cols.begin() + rel.ptr[i + 1]);
  }
  return rel;
}

// ---- write: rank 0 writes the file in new-id order, every rank streams its rows to it --------

// The rest of the block's rows, read once (1/W of each array).
struct RowData {
  std::vector<float> features;
  std::vector<std::int64_t> labels;
  std::vector<std::uint8_t> label_matrix, val, test;
};

void read_row_data(const World& w, const MyRows& m, RowData& d) {
  on_every_rank(w, [&] {
    if (m.meta.num_features > 0) d.features = m.reader->read_features(m.b0, m.b1);
    if (m.meta.multilabel)
      d.label_matrix = m.reader->read_label_matrix(m.b0, m.b1);
    else
      d.labels = m.reader->read_labels(m.b0, m.b1);
    d.val = m.reader->read_mask("val", m.b0, m.b1);
    d.test = m.reader->read_mask("test", m.b0, m.b1);
  });
}

// Segment (p, r) = rank r's nodes of part p: new ids are segments in (p, r) order.
template <class Fn>
void for_segments(const World& w, const NewIds& ids, int K, Fn&& fn) {
  for (int p = 0; p < K; ++p)
    for (int r = 0; r < w.size; ++r) fn(p, r, ids.counts[static_cast<std::size_t>(r) * K + p]);
}

// The dataset part of the file (CSR, features, labels, masks), through graph::DatasetWriter's
// row-streaming calls at rank 0; returns its content checksum there.
std::string write_dataset(const World& w, const MyRows& m, const NewIds& ids, RelabelledRows& rel, RowData& d,
                          const PartitionOptions& options, detail::TempFileGuard& tmp) {
  const int K = options.num_parts;
  std::optional<graph::DatasetWriter> writer;
  on_every_rank(w, [&] {
    if (w.rank != 0) return;
    graph::DatasetMeta out_meta = m.meta;
    out_meta.source = "partition of " + (m.meta.source.empty() ? m.meta.name : m.meta.source) + " into " +
                      std::to_string(K) + " parts (" + kPtScotchMethod + ", seed " + std::to_string(options.seed) +
                      ", " + std::to_string(w.size) + " ranks)";
    writer.emplace(tmp.path, out_meta);
    tmp.armed = true;
  });
  // indptr: each piece's row lengths become running offsets at rank 0.
  std::int64_t offset = 0;
  if (w.rank == 0) writer->append_indptr(&offset, 1);
  for_segments(w, ids, K, [&](int p, int r, std::int64_t nrows) {
    move_rows<std::int64_t>(
        w, r, nrows, 1,
        [&](std::int64_t* b, std::int64_t r0, std::int64_t k) {
          for (std::int64_t i = 0; i < k; ++i) b[i] = m.rows.out_degree(ids.order[ids.seg[p] + r0 + i]);
        },
        [&](std::int64_t* b, std::int64_t k) {
          for (std::int64_t i = 0; i < k; ++i) b[i] = offset += b[i];
          writer->append_indptr(b, k);
        });
  });
  for_segments(w, ids, K, [&](int p, int r, std::int64_t) {
    move_rows<graph::NodeId>(
        w, r, ids.edges[static_cast<std::size_t>(r) * K + p], 1,
        [&](graph::NodeId* b, std::int64_t r0, std::int64_t k) {
          std::copy_n(rel.cols.begin() + rel.ptr[ids.seg[p]] + r0, k, b);
        },
        [&](graph::NodeId* b, std::int64_t k) { writer->append_indices(b, k); });
  });
  rel = {};
  // Per-node arrays: rows gathered in `order` from the block.
  auto move_node_rows = [&](const auto& src, std::int64_t width, auto&& sink) {
    using T = typename std::decay_t<decltype(src)>::value_type;
    for_segments(w, ids, K, [&](int p, int r, std::int64_t nrows) {
      move_rows<T>(
          w, r, nrows, width,
          [&](T* b, std::int64_t r0, std::int64_t k) {
            for (std::int64_t i = 0; i < k; ++i)
              std::copy_n(src.begin() + ids.order[ids.seg[p] + r0 + i] * width, width, b + i * width);
          },
          sink);
    });
  };
  if (m.meta.num_features > 0)
    move_node_rows(d.features, m.meta.num_features, [&](float* b, std::int64_t k) { writer->append_feature_rows(b, k); });
  d.features = {};
  if (m.meta.multilabel)
    move_node_rows(d.label_matrix, m.meta.num_classes,
                   [&](std::uint8_t* b, std::int64_t k) { writer->append_label_rows(b, k); });
  else
    move_node_rows(d.labels, 1, [&](std::int64_t* b, std::int64_t k) { writer->append_labels(b, k); });
  for (const auto& [name, mask] : {std::pair<const char*, const std::vector<std::uint8_t>*>{"train", &m.train},
                                   {"val", &d.val},
                                   {"test", &d.test}}) {
    const std::string mask_name = name;
    move_node_rows(*mask, 1, [&](std::uint8_t* b, std::int64_t k) { writer->append_mask(mask_name, b, k); });
  }
  if (w.rank != 0) return "";
  if (!m.meta.label_names.empty()) writer->write_label_names(m.meta.label_names);
  std::string checksum = writer->finish();
  writer.reset();
  return checksum;
}

// The /partition group: new_to_old by new id (segments), part_of by original id (blocks), then
// the peak memory of every rank for the report, and the group's tables at rank 0.
void write_partition_group(const World& w, const MyRows& m, const NewIds& ids, const std::vector<PartId>& part,
                           const PartitionOptions& options, const std::string& path, Clock::time_point t,
                           PartitionReport& rep) {
  const int K = options.num_parts;
  std::optional<h5::File> f;
  const std::string grp = "/partition";
  std::optional<integrity::BlockHasher> n2o_hash, part_hash;
  std::optional<h5::Dataset> n2o_ds, part_ds;
  if (w.rank == 0) {
    f.emplace(h5::File::open_readwrite(path));
    f->create_group(grp);
    n2o_ds.emplace(f->create_dataset<std::int64_t>(grp + "/new_to_old", {static_cast<std::uint64_t>(m.n)}));
    part_ds.emplace(f->create_dataset<std::int32_t>(grp + "/part_of", {static_cast<std::uint64_t>(m.n)}));
    n2o_hash.emplace(sizeof(std::int64_t), integrity::kBlockRows1d);
    part_hash.emplace(sizeof(std::int32_t), integrity::kBlockRows1d);
  }
  std::uint64_t written = 0;
  for_segments(w, ids, K, [&](int p, int r, std::int64_t nrows) {
    move_rows<std::int64_t>(
        w, r, nrows, 1,
        [&](std::int64_t* b, std::int64_t r0, std::int64_t k) {
          for (std::int64_t i = 0; i < k; ++i) b[i] = m.b0 + ids.order[ids.seg[p] + r0 + i];
        },
        [&](std::int64_t* b, std::int64_t k) {
          n2o_ds->write_rows(written, static_cast<std::uint64_t>(k), b);
          n2o_hash->update(b, static_cast<std::uint64_t>(k));
          written += static_cast<std::uint64_t>(k);
        });
  });
  written = 0;
  for (int r = 0; r < w.size; ++r)
    move_rows<std::int32_t>(
        w, r, m.blocks[r + 1] - m.blocks[r], 1,
        [&](std::int32_t* b, std::int64_t r0, std::int64_t k) { std::copy_n(part.begin() + r0, k, b); },
        [&](std::int32_t* b, std::int64_t k) {
          part_ds->write_rows(written, static_cast<std::uint64_t>(k), b);
          part_hash->update(b, static_cast<std::uint64_t>(k));
          written += static_cast<std::uint64_t>(k);
        });
  rep.seconds_write = seconds_since(t);
  const auto rss = static_cast<std::int64_t>(peak_rss_bytes());
  std::vector<std::int64_t> every_rss(static_cast<std::size_t>(w.size));
  w.comms.allgather(&rss, every_rss.data(), 1);
  if (w.rank != 0) return;
  rep.rank_peak_rss = every_rss;
  n2o_ds.reset();
  part_ds.reset();
  detail::finish_partition_group(*f, kPtScotchMethod, options, rep.quality, ids.part_offsets, m.meta.checksum,
                                 m.meta.name,
                                 {{"/partition/part_of", part_hash->finish()},
                                  {"/partition/new_to_old", n2o_hash->finish()}});
  f->close();
}

double peak_rss_mib() { return static_cast<double>(peak_rss_bytes()) / 1048576.0; }

}  // namespace

PartitionReport partition_dataset_distributed(const std::string& dataset_path, const std::string& out_path,
                                              const PartitionOptions& options, const dist::Collectives& comms) {
  const World w{comms, comms.rank(), comms.size()};
  const int K = options.num_parts;
  PartitionReport rep;
  rep.method = kPtScotchMethod;
  auto t = Clock::now();

  check_options(w, dataset_path, out_path, options);
  MyRows m;
  read_my_rows(w, dataset_path, K, m);
  rep.dataset_checksum = m.meta.checksum;
  rep.num_nodes = m.n;
  rep.num_edges = m.meta.num_edges;

  detail::LocalGraph g = build_distributed_graph(w, m);
  rep.seconds_read = seconds_since(t);
  if (w.rank == 0)
    spdlog::info("partition: read and symmetrised in {:.2f} s (rank 0: {} adjacency entries, peak RSS so far {:.0f} "
                 "MiB); PT-Scotch into {} parts",
                 rep.seconds_read, g.adjncy.size(), peak_rss_mib(), K);
  t = Clock::now();
  const std::vector<PartId> part = assign_parts(w, g, m, options, dataset_path);
  g.weights = {};
  rep.seconds_assign = seconds_since(t);
  if (w.rank == 0)
    spdlog::info("partition: PT-Scotch assignment in {:.2f} s (rank 0 peak RSS so far {:.0f} MiB)", rep.seconds_assign,
                 peak_rss_mib());
  t = Clock::now();

  const NewIds ids = relabel(w, m, part, K, rep.quality);
  RelabelledRows rel = exchange_ghost_ids(w, m, g, part, ids, rep.quality);
  RowData data;
  read_row_data(w, m, data);
  if (w.rank == 0)
    spdlog::info("partition: relabelled in {:.2f} s (rank 0 peak RSS so far {:.0f} MiB); edge cut {} of {} undirected "
                 "edges; rank 0 writes {}",
                 seconds_since(t), peak_rss_mib(), rep.quality.edge_cut, rep.quality.undirected_edges, out_path);

  detail::TempFileGuard tmp{out_path + ".partial-" + std::to_string(::getpid()), /*armed=*/false};
  const std::string checksum = write_dataset(w, m, ids, rel, data, options, tmp);
  if (w.rank == 0) rep.checksum = checksum;
  write_partition_group(w, m, ids, part, options, tmp.path, t, rep);
  if (w.rank == 0) {
    std::error_code ec;
    std::filesystem::rename(tmp.path, out_path, ec);
    if (ec) throw IoError(out_path + ": cannot move the finished partition file into place: " + ec.message());
    tmp.armed = false;
  }
  // Nobody returns before the file is in place (a caller may open it next).
  comms.barrier();
  return rep;
}

}  // namespace dpgnn::partition
