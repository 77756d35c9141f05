// Loading a rank's shard: one hyperslab per array for the owned rows, per-part training
// graphs, and halo metadata. See include/dpgnn/partition/shard.h.
#include "dpgnn/partition/shard.h"

#include <algorithm>
#include <iterator>

#include "dpgnn/util/error.h"

namespace dpgnn::partition {

std::pair<int, int> parts_for_rank(int rank, int world_size, int num_parts) {
  if (world_size < 1) throw UsageError("world size " + std::to_string(world_size) + " must be >= 1");
  if (rank < 0 || rank >= world_size)
    throw UsageError("rank " + std::to_string(rank) + " outside [0, " + std::to_string(world_size) + ")");
  if (num_parts < 1) throw UsageError("number of parts " + std::to_string(num_parts) + " must be >= 1");
  if (world_size > num_parts)
    throw UsageError("cannot run " + std::to_string(world_size) + " ranks on a partition with " +
                     std::to_string(num_parts) + " parts: each rank owns at least one whole part "
                     "(re-partition with `dpgnn partition --parts` >= " + std::to_string(world_size) +
                     ", or use fewer ranks)");
  const auto block = [&](int r) {
    return static_cast<int>(static_cast<std::int64_t>(r) * num_parts / world_size);
  };
  return {block(rank), block(rank + 1)};
}

int Shard::owner_of(std::int64_t global_id) const {
  const auto it = std::upper_bound(rank_offsets.begin(), rank_offsets.end(), global_id);
  return static_cast<int>(it - rank_offsets.begin()) - 1;
}

graph::CsrGraph part_training_graph(const graph::CsrGraph& part_rows, std::int64_t part_begin,
                                    const std::vector<std::uint8_t>& part_train_mask, graph::Setting setting) {
  const std::int64_t n = part_rows.num_nodes();
  const bool inductive = setting == graph::Setting::inductive;
  if (inductive && static_cast<std::int64_t>(part_train_mask.size()) != n)
    throw std::invalid_argument("part_training_graph: the train mask needs one entry per row");
  auto keep = [&](std::int64_t u, std::int64_t v_local) {
    if (v_local < 0 || v_local >= n) return false;  // leaves the part
    return !inductive || (part_train_mask[u] != 0 && part_train_mask[v_local] != 0);
  };
  std::vector<graph::EdgeIdx> indptr(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t u = 0; u < n; ++u) {
    std::int64_t d = 0;
    for (graph::NodeId v : part_rows.out_neigh(u)) d += keep(u, v - part_begin) ? 1 : 0;
    indptr[u + 1] = indptr[u] + d;
  }
  std::vector<graph::NodeId> indices(static_cast<std::size_t>(indptr[n]));
  graph::EdgeIdx pos = 0;
  for (std::int64_t u = 0; u < n; ++u)
    for (graph::NodeId v : part_rows.out_neigh(u))
      if (keep(u, v - part_begin)) indices[pos++] = static_cast<graph::NodeId>(v - part_begin);
  return graph::CsrGraph(std::move(indptr), std::move(indices), n);
}

Shard load_shard(const PartitionFile& partition, int rank, int world_size, const ShardOptions& options) {
  Shard s;
  s.file = partition.path();
  s.dataset_checksum = partition.dataset_checksum();
  s.meta = partition.meta();
  s.rank = rank;
  s.world_size = world_size;
  s.num_parts = partition.num_parts();
  std::tie(s.first_part, s.last_part) = parts_for_rank(rank, world_size, s.num_parts);
  s.part_offsets = partition.part_offsets();
  s.rank_offsets.resize(static_cast<std::size_t>(world_size) + 1);
  for (int r = 0; r <= world_size; ++r) {
    const int first = r == world_size ? s.num_parts : parts_for_rank(r, world_size, s.num_parts).first;
    s.rank_offsets[r] = s.part_offsets[first];
  }
  s.begin = s.part_offsets[s.first_part];
  s.end = s.part_offsets[s.last_part];
  const std::int64_t n_local = s.num_local();

  // One hyperslab per array for the rows [begin, end).
  const graph::DatasetReader reader(partition.path());
  s.rows = reader.read_rows(s.begin, s.end);
  s.degrees.resize(static_cast<std::size_t>(n_local));
  for (std::int64_t v = 0; v < n_local; ++v) s.degrees[v] = s.rows.out_degree(v);
  if (options.load_features) s.features = reader.read_features(s.begin, s.end);
  if (s.meta.multilabel)
    s.label_matrix = reader.read_label_matrix(s.begin, s.end);
  else
    s.labels = reader.read_labels(s.begin, s.end);
  s.train_mask = reader.read_mask("train", s.begin, s.end);
  s.val_mask = reader.read_mask("val", s.begin, s.end);
  s.test_mask = reader.read_mask("test", s.begin, s.end);
  s.new_to_old = partition.read_new_to_old(s.begin, s.end);

  // Training graph of each owned part, from the part's slice of the rows.
  for (int p = s.first_part; p < s.last_part; ++p) {
    const std::int64_t b = s.part_offsets[p] - s.begin, e = s.part_offsets[p + 1] - s.begin;
    const auto& ip = s.rows.indptr();
    std::vector<graph::EdgeIdx> sub_indptr(ip.begin() + b, ip.begin() + e + 1);
    for (auto& x : sub_indptr) x -= ip[b];
    std::vector<graph::NodeId> sub_indices(s.rows.indices().begin() + ip[b], s.rows.indices().begin() + ip[e]);
    const graph::CsrGraph part_rows(std::move(sub_indptr), std::move(sub_indices), s.rows.num_cols());
    const std::vector<std::uint8_t> part_train(s.train_mask.begin() + b, s.train_mask.begin() + e);
    PartGraph pg;
    pg.part = p;
    pg.begin = s.part_offsets[p];
    pg.end = s.part_offsets[p + 1];
    pg.graph = part_training_graph(part_rows, pg.begin, part_train, s.meta.setting);
    s.training_graphs.push_back(std::move(pg));
  }

  // Halo: neighbours outside [begin, end), unique, grouped by owning rank.
  // Sorted and merged a chunk of entries at a time, so the temporary is the halo plus one
  // chunk, not one id per CSR entry (a rank of ogbn-products holds ~30M entries).
  std::vector<graph::NodeId> remote, chunk, merged;
  constexpr std::size_t kChunk = std::size_t{1} << 22;
  const auto& all = s.rows.indices();
  for (std::size_t c0 = 0; c0 < all.size(); c0 += kChunk) {
    chunk.clear();
    for (std::size_t k = c0; k < std::min(all.size(), c0 + kChunk); ++k)
      if (!s.owns(all[k])) chunk.push_back(all[k]);
    std::sort(chunk.begin(), chunk.end());
    chunk.erase(std::unique(chunk.begin(), chunk.end()), chunk.end());
    merged.clear();
    merged.reserve(remote.size() + chunk.size());
    std::set_union(remote.begin(), remote.end(), chunk.begin(), chunk.end(), std::back_inserter(merged));
    remote.swap(merged);
  }
  std::vector<graph::NodeId>().swap(chunk);
  std::vector<graph::NodeId>().swap(merged);
  s.halo.resize(static_cast<std::size_t>(world_size));
  for (int q = 0; q < world_size; ++q) s.halo[q].rank = q;
  for (graph::NodeId v : remote) s.halo[s.owner_of(v)].nodes.push_back(v);
  // Global degrees: one read of indptr over the span of each group's ids.
  for (auto& h : s.halo) {
    if (h.nodes.empty()) continue;
    const std::int64_t lo = h.nodes.front(), hi = h.nodes.back() + 1;
    const std::vector<graph::EdgeIdx> ip = reader.read_indptr(lo, hi);  // [hi - lo + 1]
    h.degrees.resize(h.nodes.size());
    for (std::size_t i = 0; i < h.nodes.size(); ++i) {
      const std::int64_t d = ip[h.nodes[i] - lo + 1] - ip[h.nodes[i] - lo];
      if (d < 0) throw DataError(partition.path(), "/graph/indptr", "not monotone at row " + std::to_string(h.nodes[i]));
      h.degrees[i] = d;
    }
  }
  return s;
}

Shard load_shard(const std::string& partition_path, int rank, int world_size, const ShardOptions& options) {
  return load_shard(PartitionFile::open(partition_path), rank, world_size, options);
}

}  // namespace dpgnn::partition
