// Distributed partitioning with PT-Scotch and the rank-0 streaming writer. Layout and
// rationale in include/dpgnn/partition/distributed_partition.h and docs/partitioning.md.
#include "dpgnn/partition/distributed_partition.h"

#include <mpi.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>
#include <type_traits>

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
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
};

void mpi_ok(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw IoError(std::string("partition: ") + call + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

template <typename T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<std::int32_t>() { return MPI_INT32_T; }
template <>
MPI_Datatype mpi_type<std::int64_t>() { return MPI_INT64_T; }
template <>
MPI_Datatype mpi_type<std::uint8_t>() { return MPI_UINT8_T; }
template <>
MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }

// Runs `fn` on every rank (util/collective.h): an error every rank meets alike becomes one
// CollectiveError reported by rank 0.
template <class Fn>
void on_every_rank(const World& w, Fn&& fn) {
  dpgnn::on_every_rank(
      w.rank, w.size,
      [&](std::int64_t failed) {
        mpi_ok(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT64_T, MPI_SUM, w.comm), "MPI_Allreduce");
        return failed;
      },
      std::forward<Fn>(fn));
}

std::int64_t allreduce_sum(const World& w, std::int64_t x) {
  mpi_ok(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT64_T, MPI_SUM, w.comm), "MPI_Allreduce");
  return x;
}

// All-to-all of variable-sized pieces: send_counts[q] elements of `send` (in rank order) go
// to rank q; returns what arrives, in rank order, and its counts.
template <typename T>
std::vector<T> alltoallv(const World& w, const std::vector<T>& send, const std::vector<std::int64_t>& send_counts,
                         std::vector<std::int64_t>& recv_counts) {
  recv_counts.assign(static_cast<std::size_t>(w.size), 0);
  mpi_ok(MPI_Alltoall(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1, MPI_INT64_T, w.comm), "MPI_Alltoall");
  std::vector<int> sc(w.size), sd(w.size), rc(w.size), rd(w.size);
  std::int64_t so = 0, ro = 0;
  for (int q = 0; q < w.size; ++q) {
    // MPI's counts and displacements are ints: more ranks make the pieces smaller.
    if (so + send_counts[q] > INT_MAX || ro + recv_counts[q] > INT_MAX)
      throw IoError("partition: an all-to-all exchange of more than 2^31-1 elements per rank; run with more ranks");
    sc[q] = static_cast<int>(send_counts[q]);
    sd[q] = static_cast<int>(so);
    rc[q] = static_cast<int>(recv_counts[q]);
    rd[q] = static_cast<int>(ro);
    so += send_counts[q];
    ro += recv_counts[q];
  }
  std::vector<T> recv(static_cast<std::size_t>(ro));
  mpi_ok(MPI_Alltoallv(send.data(), sc.data(), sd.data(), mpi_type<T>(), recv.data(), rc.data(), rd.data(),
                       mpi_type<T>(), w.comm),
         "MPI_Alltoallv");
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
void move_rows(const World& w, int src, std::int64_t rows, std::int64_t width, int tag, Fill&& fill, Sink&& sink) {
  if (w.rank != src && w.rank != 0) return;
  if (rows == 0) return;
  const auto row_bytes = static_cast<std::int64_t>(std::max<std::int64_t>(1, width) * sizeof(T));
  const std::int64_t chunk = std::max<std::int64_t>(1, kChunkBytes / row_bytes);
  std::vector<T> buf(static_cast<std::size_t>(std::min(rows, chunk) * width));
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::int64_t k = std::min(chunk, rows - r0);
    const int count = static_cast<int>(k * width);
    if (w.rank == src) fill(buf.data(), r0, k);
    if (src != 0) {
      if (w.rank == src)
        mpi_ok(MPI_Send(buf.data(), count, mpi_type<T>(), 0, tag, w.comm), "MPI_Send");
      else
        mpi_ok(MPI_Recv(buf.data(), count, mpi_type<T>(), src, tag, w.comm, MPI_STATUS_IGNORE), "MPI_Recv");
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

PartitionReport partition_dataset_distributed(const std::string& dataset_path, const std::string& out_path,
                                              const PartitionOptions& options) {
  namespace fs = std::filesystem;
  World w;
  mpi_ok(MPI_Comm_rank(w.comm, &w.rank), "MPI_Comm_rank");
  mpi_ok(MPI_Comm_size(w.comm, &w.size), "MPI_Comm_size");
  const int K = options.num_parts;
  PartitionReport rep;
  rep.method = kPtScotchMethod;
  auto t = Clock::now();

  // ---- checks and this rank's block of the input ----------------------------------------
  std::optional<graph::DatasetReader> reader;
  graph::CsrGraph rows;
  std::vector<std::uint8_t> train;
  std::int64_t n = 0, b0 = 0, b1 = 0;
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
  on_every_rank(w, [&] {
    reader.emplace(dataset_path);
    n = reader->meta().num_nodes;
    check_num_parts(K, n, dataset_path);
    std::tie(b0, b1) = input_block(n, w.rank, w.size);
    rows = reader->read_rows(b0, b1);
    train = reader->read_mask("train", b0, b1);
  });
  const graph::DatasetMeta meta = reader->meta();
  std::vector<std::int64_t> blocks(static_cast<std::size_t>(w.size) + 1);
  for (int r = 0; r <= w.size; ++r) blocks[r] = input_block(n, std::min(r, w.size), w.size).first;
  blocks[w.size] = n;
  const std::int64_t nl = b1 - b0;
  rep.dataset_checksum = meta.checksum;
  rep.num_nodes = n;
  rep.num_edges = meta.num_edges;
  if (w.rank == 0)
    spdlog::info("partition: {} ranks, each reading its block of {} (~{} nodes); rank 0 read {} rows, {} entries",
                 w.size, dataset_path, n / w.size, nl, rows.num_edges());

  // ---- PT-Scotch on the symmetrised distributed graph -------------------------------------
  detail::LocalGraph g = symmetric_block(w, rows, b0, blocks);
  const std::int64_t local_train = std::count_if(train.begin(), train.end(), [](std::uint8_t x) { return x != 0; });
  const std::int64_t total_train = allreduce_sum(w, local_train);
  const std::int64_t ratio = detail::train_weight_ratio(n, meta.num_edges, total_train);
  g.weights.resize(static_cast<std::size_t>(nl));
  for (std::int64_t u = 0; u < nl; ++u) g.weights[u] = detail::combined_weight(rows.out_degree(u), train[u] != 0, ratio);
  rep.seconds_read = seconds_since(t);
  if (w.rank == 0)
    spdlog::info("partition: read and symmetrised in {:.2f} s (rank 0: {} adjacency entries, peak RSS so far {:.0f} "
                 "MiB); PT-Scotch into {} parts",
                 rep.seconds_read, g.adjncy.size(), static_cast<double>(peak_rss_bytes()) / 1048576.0, K);
  t = Clock::now();
  std::vector<PartId> part;
  if (K == 1) {
    part.assign(static_cast<std::size_t>(nl), 0);  // nothing to partition
  } else {
    const std::int64_t sym_entries = allreduce_sum(w, static_cast<std::int64_t>(g.adjncy.size()));
    const double keep = detail::keep_fraction(n, sym_entries);
    detail::LocalGraph sample;  // only when something is dropped (keep is the same on every rank)
    if (keep < 1.0) sample = detail::sample_edges(g, keep, options.seed);
    detail::LocalGraph& input = keep < 1.0 ? sample : g;
    const std::int64_t kept = allreduce_sum(w, static_cast<std::int64_t>(input.adjncy.size()));
    if (w.rank == 0)
      spdlog::info("partition: PT-Scotch partitions a uniform sample of {} of {} adjacency entries (keep {:.4f}: "
                   "average degree <= {:.0f})",
                   kept, sym_entries, keep, detail::kScotchSampleDegree);
    part = detail::ptscotch_assignment(input, K, options.imbalance, options.seed, w.comm, dataset_path);
  }
  g.weights = {};
  rep.seconds_assign = seconds_since(t);
  if (w.rank == 0)
    spdlog::info("partition: PT-Scotch assignment in {:.2f} s (rank 0 peak RSS so far {:.0f} MiB)", rep.seconds_assign,
                 static_cast<double>(peak_rss_bytes()) / 1048576.0);
  t = Clock::now();

  // ---- new ids: part-major, original order inside a part --------------------------------
  // counts[r * K + p] = nodes of part p in rank r's block (W x K numbers, not N).
  std::vector<std::int64_t> local_counts(static_cast<std::size_t>(K), 0), local_edges(static_cast<std::size_t>(K), 0);
  std::vector<std::int64_t> local_train_parts(static_cast<std::size_t>(K), 0);
  for (std::int64_t u = 0; u < nl; ++u) {
    ++local_counts[part[u]];
    local_edges[part[u]] += rows.out_degree(u);
    local_train_parts[part[u]] += train[u] != 0 ? 1 : 0;
  }
  std::vector<std::int64_t> counts(static_cast<std::size_t>(w.size) * K), edges(static_cast<std::size_t>(w.size) * K);
  mpi_ok(MPI_Allgather(local_counts.data(), K, MPI_INT64_T, counts.data(), K, MPI_INT64_T, w.comm), "MPI_Allgather");
  mpi_ok(MPI_Allgather(local_edges.data(), K, MPI_INT64_T, edges.data(), K, MPI_INT64_T, w.comm), "MPI_Allgather");
  auto& q = rep.quality;
  q.part_nodes.assign(static_cast<std::size_t>(K), 0);
  q.part_edges.assign(static_cast<std::size_t>(K), 0);
  for (int r = 0; r < w.size; ++r)
    for (int p = 0; p < K; ++p) {
      q.part_nodes[p] += counts[static_cast<std::size_t>(r) * K + p];
      q.part_edges[p] += edges[static_cast<std::size_t>(r) * K + p];
    }
  q.part_train_nodes = local_train_parts;
  mpi_ok(MPI_Allreduce(MPI_IN_PLACE, q.part_train_nodes.data(), K, MPI_INT64_T, MPI_SUM, w.comm), "MPI_Allreduce");
  std::vector<std::int64_t> part_offsets(static_cast<std::size_t>(K) + 1, 0);
  for (int p = 0; p < K; ++p) part_offsets[p + 1] = part_offsets[p] + q.part_nodes[p];
  // This rank's nodes of part p get new ids from part_offsets[p] + (part p's nodes on lower ranks).
  std::vector<std::int64_t> next(static_cast<std::size_t>(K));
  for (int p = 0; p < K; ++p) {
    next[p] = part_offsets[p];
    for (int r = 0; r < w.rank; ++r) next[p] += counts[static_cast<std::size_t>(r) * K + p];
  }
  // order = local nodes sorted by (part, id); seg[p] = where part p starts in it.
  std::vector<std::int64_t> new_id(static_cast<std::size_t>(nl)), order(static_cast<std::size_t>(nl)),
      seg(static_cast<std::size_t>(K) + 1, 0);
  for (int p = 0; p < K; ++p) seg[p + 1] = seg[p] + local_counts[p];
  {
    std::vector<std::int64_t> at(seg.begin(), seg.end() - 1);
    for (std::int64_t u = 0; u < nl; ++u) {
      new_id[u] = next[part[u]]++;
      order[at[part[u]]++] = u;
    }
  }

  // ---- new ids of remote neighbours: one all-to-all lookup at their owners ---------------
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
    for (std::int64_t v : ghosts) ++ask[owner_of(blocks, v)];  // sorted ids: grouped by owner already
    std::vector<std::int64_t> asked = alltoallv(w, ghosts, ask, asked_counts);
    for (auto& v : asked) {
      if (v < b0 || v >= b1) throw IoError("partition: internal error: lookup of node " + std::to_string(v) + " at the wrong rank");
      v = new_id[v - b0];
    }
    std::vector<std::int64_t> back_counts;
    ghost_new = alltoallv(w, asked, asked_counts, back_counts);
  }
  auto new_of = [&](std::int64_t v) {
    if (v >= b0 && v < b1) return new_id[v - b0];
    return ghost_new[std::lower_bound(ghosts.begin(), ghosts.end(), v) - ghosts.begin()];
  };
  auto part_of_new = [&](std::int64_t x) {
    return static_cast<int>(std::upper_bound(part_offsets.begin(), part_offsets.end(), x) - part_offsets.begin()) - 1;
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

  // Relabelled rows in `order`: sorted new ids of each row's neighbours.
  std::vector<std::int64_t> rel_ptr(static_cast<std::size_t>(nl) + 1, 0);
  for (std::int64_t i = 0; i < nl; ++i) rel_ptr[i + 1] = rel_ptr[i] + rows.out_degree(order[i]);
  std::vector<graph::NodeId> rel(static_cast<std::size_t>(rel_ptr[nl]));
  for (std::int64_t i = 0; i < nl; ++i) {
    std::int64_t o = rel_ptr[i];
    for (graph::NodeId v : rows.out_neigh(order[i])) rel[o++] = static_cast<graph::NodeId>(new_of(v));
    std::sort(rel.begin() + rel_ptr[i], rel.begin() + rel_ptr[i + 1]);
  }
  ghosts = {};
  ghost_new = {};
  // Row data of the block, read once (1/W of each array).
  std::vector<float> features;
  std::vector<std::int64_t> labels;
  std::vector<std::uint8_t> label_matrix, val, test;
  on_every_rank(w, [&] {
    if (meta.num_features > 0) features = reader->read_features(b0, b1);
    if (meta.multilabel)
      label_matrix = reader->read_label_matrix(b0, b1);
    else
      labels = reader->read_labels(b0, b1);
    val = reader->read_mask("val", b0, b1);
    test = reader->read_mask("test", b0, b1);
  });
  if (w.rank == 0)
    spdlog::info("partition: relabelled in {:.2f} s (rank 0 peak RSS so far {:.0f} MiB); edge cut {} of {} undirected "
                 "edges; rank 0 writes {}",
                 seconds_since(t), static_cast<double>(peak_rss_bytes()) / 1048576.0, q.edge_cut, q.undirected_edges,
                 out_path);

  // ---- the file, written by rank 0 in new-id order ---------------------------------------
  // Segment (p, r) = rank r's nodes of part p: new ids are segments in (p, r) order.
  auto for_segments = [&](auto&& fn) {
    for (int p = 0; p < K; ++p)
      for (int r = 0; r < w.size; ++r) fn(p, r, counts[static_cast<std::size_t>(r) * K + p]);
  };
  detail::TempFileGuard tmp{out_path + ".partial-" + std::to_string(::getpid()), /*armed=*/false};
  std::optional<graph::DatasetWriter> writer;
  on_every_rank(w, [&] {
    if (w.rank != 0) return;
    graph::DatasetMeta out_meta = meta;
    out_meta.source = "partition of " + (meta.source.empty() ? meta.name : meta.source) + " into " +
                      std::to_string(K) + " parts (" + kPtScotchMethod + ", seed " + std::to_string(options.seed) +
                      ", " + std::to_string(w.size) + " ranks)";
    writer.emplace(tmp.path, out_meta);
    tmp.armed = true;
  });
  int tag = 0;
  // indptr: each piece's row lengths become running offsets at rank 0.
  std::int64_t offset = 0;
  if (w.rank == 0) writer->append_indptr(&offset, 1);
  ++tag;
  for_segments([&](int p, int r, std::int64_t nrows) {
    move_rows<std::int64_t>(
        w, r, nrows, 1, tag,
        [&](std::int64_t* b, std::int64_t r0, std::int64_t k) {
          for (std::int64_t i = 0; i < k; ++i) b[i] = rows.out_degree(order[seg[p] + r0 + i]);
        },
        [&](std::int64_t* b, std::int64_t k) {
          for (std::int64_t i = 0; i < k; ++i) b[i] = offset += b[i];
          writer->append_indptr(b, k);
        });
  });
  ++tag;
  for_segments([&](int p, int r, std::int64_t) {
    move_rows<graph::NodeId>(
        w, r, edges[static_cast<std::size_t>(r) * K + p], 1, tag,
        [&](graph::NodeId* b, std::int64_t r0, std::int64_t k) {
          std::copy_n(rel.begin() + rel_ptr[seg[p]] + r0, k, b);
        },
        [&](graph::NodeId* b, std::int64_t k) { writer->append_indices(b, k); });
  });
  rel = {};
  // Per-node arrays: rows gathered in `order` from the block.
  auto move_node_rows = [&](const auto& src, std::int64_t width, auto&& sink) {
    using T = typename std::decay_t<decltype(src)>::value_type;
    ++tag;
    for_segments([&](int p, int r, std::int64_t nrows) {
      move_rows<T>(
          w, r, nrows, width, tag,
          [&](T* b, std::int64_t r0, std::int64_t k) {
            for (std::int64_t i = 0; i < k; ++i)
              std::copy_n(src.begin() + order[seg[p] + r0 + i] * width, width, b + i * width);
          },
          sink);
    });
  };
  if (meta.num_features > 0)
    move_node_rows(features, meta.num_features, [&](float* b, std::int64_t k) { writer->append_feature_rows(b, k); });
  features = {};
  if (meta.multilabel)
    move_node_rows(label_matrix, meta.num_classes,
                   [&](std::uint8_t* b, std::int64_t k) { writer->append_label_rows(b, k); });
  else
    move_node_rows(labels, 1, [&](std::int64_t* b, std::int64_t k) { writer->append_labels(b, k); });
  for (const auto& [name, mask] : {std::pair<const char*, const std::vector<std::uint8_t>*>{"train", &train},
                                   {"val", &val},
                                   {"test", &test}}) {
    const std::string mask_name = name;
    move_node_rows(*mask, 1, [&](std::uint8_t* b, std::int64_t k) { writer->append_mask(mask_name, b, k); });
  }
  if (w.rank == 0) {
    if (!meta.label_names.empty()) writer->write_label_names(meta.label_names);
    rep.checksum = writer->finish();
    writer.reset();
  }

  // The /partition group: new_to_old by new id (segments), part_of by original id (blocks).
  std::optional<h5::File> f;
  const std::string grp = "/partition";
  std::optional<integrity::BlockHasher> n2o_hash, part_hash;
  std::optional<h5::Dataset> n2o_ds, part_ds;
  if (w.rank == 0) {
    f.emplace(h5::File::open_readwrite(tmp.path));
    f->create_group(grp);
    n2o_ds.emplace(f->create_dataset<std::int64_t>(grp + "/new_to_old", {static_cast<std::uint64_t>(n)}));
    part_ds.emplace(f->create_dataset<std::int32_t>(grp + "/part_of", {static_cast<std::uint64_t>(n)}));
    n2o_hash.emplace(sizeof(std::int64_t), integrity::kBlockRows1d);
    part_hash.emplace(sizeof(std::int32_t), integrity::kBlockRows1d);
  }
  std::uint64_t written = 0;
  ++tag;
  for_segments([&](int p, int r, std::int64_t nrows) {
    move_rows<std::int64_t>(
        w, r, nrows, 1, tag,
        [&](std::int64_t* b, std::int64_t r0, std::int64_t k) {
          for (std::int64_t i = 0; i < k; ++i) b[i] = b0 + order[seg[p] + r0 + i];
        },
        [&](std::int64_t* b, std::int64_t k) {
          n2o_ds->write_rows(written, static_cast<std::uint64_t>(k), b);
          n2o_hash->update(b, static_cast<std::uint64_t>(k));
          written += static_cast<std::uint64_t>(k);
        });
  });
  written = 0;
  ++tag;
  for (int r = 0; r < w.size; ++r)
    move_rows<std::int32_t>(
        w, r, blocks[r + 1] - blocks[r], 1, tag,
        [&](std::int32_t* b, std::int64_t r0, std::int64_t k) { std::copy_n(part.begin() + r0, k, b); },
        [&](std::int32_t* b, std::int64_t k) {
          part_ds->write_rows(written, static_cast<std::uint64_t>(k), b);
          part_hash->update(b, static_cast<std::uint64_t>(k));
          written += static_cast<std::uint64_t>(k);
        });
  rep.seconds_write = seconds_since(t);

  // Peak memory of every rank, for the report.
  const auto rss = static_cast<std::int64_t>(peak_rss_bytes());
  if (w.rank == 0) rep.rank_peak_rss.resize(static_cast<std::size_t>(w.size));
  mpi_ok(MPI_Gather(&rss, 1, MPI_INT64_T, w.rank == 0 ? rep.rank_peak_rss.data() : nullptr, 1, MPI_INT64_T, 0, w.comm),
         "MPI_Gather");
  if (w.rank == 0) {
    n2o_ds.reset();
    part_ds.reset();
    detail::finish_partition_group(*f, kPtScotchMethod, options, q, part_offsets, meta.checksum, meta.name,
                                   {{"/partition/part_of", part_hash->finish()},
                                    {"/partition/new_to_old", n2o_hash->finish()}});
    f->close();
    std::error_code ec;
    fs::rename(tmp.path, out_path, ec);
    if (ec) throw IoError(out_path + ": cannot move the finished partition file into place: " + ec.message());
    tmp.armed = false;
  }
  // Nobody returns before the file is in place (a caller may open it next).
  mpi_ok(MPI_Barrier(w.comm), "MPI_Barrier");
  return rep;
}

}  // namespace dpgnn::partition
