#include "dpar_appr.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <unordered_set>

#include "dpgnn/dist/communicator.h"
#include "dpgnn/graph/dataset.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/sampling/appr.h"
#include "dpgnn/sampling/batch.h"
#include "dpgnn/sampling/dp_topk.h"
#include "dpgnn/util/error.h"
#include "../feature_norm.h"
#include "../hidden_sample.h"

namespace dpgnn::train {
namespace {

// Training nodes of the partition file numbered 0..U-1 in id order (the DP top-K's public
// universe). A part's train mask and in-part prefix counts are read when first needed:
// at most one byte and one int64 per node of the parts the pushes reach.
class TrainingIndex {
 public:
  TrainingIndex(const partition::PartitionFile& pf, const graph::DatasetReader& reader)
      : reader_(reader), offsets_(pf.part_offsets()), part_first_(offsets_.size(), 0) {
    const auto& counts = pf.part_train_nodes();
    for (std::size_t p = 0; p < counts.size(); ++p) part_first_[p + 1] = part_first_[p] + counts[p];
    parts_.resize(counts.size());
  }
  std::int64_t size() const { return part_first_.back(); }
  // The first candidate index of part p (p = number of parts: U).
  std::int64_t first_of_part(std::size_t p) const { return part_first_[p]; }

  // Candidate index of `node`, or -1 when it is not a training node.
  std::int64_t candidate_of(std::int64_t node) {
    const std::size_t p = part_of_node(node);
    const Part& part = load(p);
    const std::int64_t i = node - offsets_[p];
    return part.mask[static_cast<std::size_t>(i)] ? part_first_[p] + part.before[static_cast<std::size_t>(i)] : -1;
  }

  std::int64_t node_of(std::int64_t candidate) {
    const auto it = std::upper_bound(part_first_.begin(), part_first_.end(), candidate);
    const std::size_t p = static_cast<std::size_t>(it - part_first_.begin()) - 1;
    const Part& part = load(p);
    const std::int64_t j = candidate - part_first_[p];  // the j-th training node of part p
    // before[i] counts training nodes among rows < i: the answer is the training row i with before[i] == j.
    const auto at = std::lower_bound(part.before.begin(), part.before.end(), j + 1);
    const std::int64_t i = static_cast<std::int64_t>(at - part.before.begin()) - 1;
    return offsets_[p] + i;
  }

 private:
  struct Part {
    bool loaded = false;
    std::vector<std::uint8_t> mask;
    std::vector<std::int64_t> before;  // [n + 1] training nodes among rows < i
  };
  std::size_t part_of_node(std::int64_t node) const {
    const auto it = std::upper_bound(offsets_.begin(), offsets_.end(), node);
    return static_cast<std::size_t>(it - offsets_.begin()) - 1;
  }
  const Part& load(std::size_t p) {
    Part& part = parts_[p];
    if (part.loaded) return part;
    part.mask = reader_.read_mask("train", offsets_[p], offsets_[p + 1]);
    part.before.assign(part.mask.size() + 1, 0);
    for (std::size_t i = 0; i < part.mask.size(); ++i) part.before[i + 1] = part.before[i] + (part.mask[i] ? 1 : 0);
    part.loaded = true;
    return part;
  }

  const graph::DatasetReader& reader_;
  std::vector<std::int64_t> offsets_;
  std::vector<std::int64_t> part_first_;
  std::vector<Part> parts_;
};

// The training graph's rows as the push asks for them, read from the partition file in
// blocks of kBlock rows (one checked hyperslab read each) and kept for the current source.
class PartitionRows : public sampling::NeighbourSource {
 public:
  // `sample` (may be null): only edges between sampled training nodes (graph sampling).
  PartitionRows(const graph::DatasetReader& reader, TrainingIndex& index, std::int64_t num_nodes,
                const HiddenSample* sample)
      : reader_(reader), index_(index), num_nodes_(num_nodes), sample_(sample) {}

  const std::vector<std::int64_t>& neighbours(std::int64_t node) override {
    auto it = rows_.find(node);
    if (it != rows_.end()) return it->second;
    const std::int64_t block = node / kBlock;
    auto b = blocks_.find(block);
    if (b == blocks_.end()) {
      if (blocks_.size() >= kMaxBlocks) blocks_.clear();  // rows_ keeps what the current push uses
      const std::int64_t begin = block * kBlock, end = std::min(num_nodes_, begin + kBlock);
      b = blocks_.emplace(block, std::make_unique<graph::CsrGraph>(reader_.read_rows(begin, end))).first;
      rows_read_ += end - begin;
    }
    const graph::CsrGraph& g = *b->second;
    std::vector<std::int64_t> out;
    if (in_graph(node))  // a training node (sampled): its edges to such nodes, no self loop
      for (auto u : g.out_neigh(node - block * kBlock))
        if (u != node && in_graph(u)) out.push_back(u);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return rows_.emplace(node, std::move(out)).first->second;
  }
  void next_source() { rows_.clear(); }
  std::int64_t rows_read() const { return rows_read_; }

 private:
  bool in_graph(std::int64_t node) {
    const std::int64_t c = index_.candidate_of(node);
    return c >= 0 && (sample_ == nullptr || sample_->contains(c));
  }
  // 64 blocks of 64 rows: ~4,000 rows at a time (16 MB at Reddit's 490 entries per row).
  static constexpr std::int64_t kBlock = 64;
  static constexpr std::size_t kMaxBlocks = 64;
  const graph::DatasetReader& reader_;
  TrainingIndex& index_;
  std::int64_t num_nodes_;
  const HiddenSample* sample_;
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> rows_;
  std::map<std::int64_t, std::unique_ptr<graph::CsrGraph>> blocks_;
  std::int64_t rows_read_ = 0;
};

sampling::TopKMechanism parse_topk(const std::string& m) {
  if (m == "gm") return sampling::TopKMechanism::gm;
  if (m == "em0") return sampling::TopKMechanism::em0;
  return sampling::TopKMechanism::em1;
}

// Post-processing of the released values into aggregation weights: negative noisy values
// count as 0, the rest are normalised to sum 1; equal weights when nothing is positive
// (em0 releases 1/K each).
std::vector<double> weights_of(const std::vector<double>& values) {
  std::vector<double> w(values.size(), 0.0);
  double total = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    w[i] = std::isfinite(values[i]) ? std::max(0.0, values[i]) : 0.0;
    total += w[i];
  }
  for (auto& x : w) x = total > 0 ? x / total : 1.0 / static_cast<double>(w.size());
  return w;
}

// The hidden sample of graph sampling (a pure function of the batch secret: every rank, any
// resume with that secret, gets the same). Each rank hashes its own parts' training nodes,
// a contiguous range of candidate indices.
HiddenSample select_graph_sample(const DparSection& d, const partition::PartitionFile& pf, TrainingIndex& index,
                                 dist::Communicator& comm, const Secret& key) {
  const auto [first_part, end_part] =
      partition::parts_for_rank(comm.rank(), comm.size(), static_cast<int>(pf.part_train_nodes().size()));
  const std::int64_t begin = index.first_of_part(static_cast<std::size_t>(first_part));
  const std::int64_t end = index.first_of_part(static_cast<std::size_t>(end_part));
  return HiddenSample::select(derive_secret(key, 3, "dpargrph"), index.size(), graph_sample_size(d, index.size()),
                              d.appr_nodes, begin, end, comm);
}

}  // namespace

std::function<bool(std::int64_t)> graph_sample_membership(const DparSection& d, const partition::PartitionFile& pf,
                                                          dist::Communicator& comm, const Secret& key) {
  if (d.graph_sampling_rate >= 1.0) return {};
  const graph::DatasetReader reader(pf.path());
  TrainingIndex index(pf, reader);
  const HiddenSample sample = select_graph_sample(d, pf, index, comm, key);
  return [sample](std::int64_t c) { return sample.contains(c); };
}

std::string serialise_release(const ApprRelease& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows) rows.push_back({{"source", row.source}, {"nodes", row.nodes}, {"weights", row.weights}});
  // nlohmann writes doubles with the shortest text that reads back to the same bits.
  return nlohmann::json{{"release", "dp-appr"},
                        {"rows", rows},
                        {"folded", r.folded},
                        {"occurrence_bound", r.occurrence_bound},
                        {"universe", r.universe}}
             .dump() +
         "\n";
}

ApprRelease parse_release(const std::string& bytes, const std::string& where) {
  ApprRelease r;
  try {
    const auto j = nlohmann::json::parse(bytes);
    for (const auto& row : j.at("rows")) {
      ApprRow a;
      a.source = row.at("source").get<std::int64_t>();
      a.nodes = row.at("nodes").get<std::vector<std::int64_t>>();
      a.weights = row.at("weights").get<std::vector<double>>();
      if (a.nodes.size() != a.weights.size()) throw std::invalid_argument("a row's nodes and weights differ in length");
      r.rows.push_back(std::move(a));
    }
    r.folded = j.at("folded").get<std::vector<std::int64_t>>();
    r.occurrence_bound = j.at("occurrence_bound").get<std::int64_t>();
    r.universe = j.at("universe").get<std::int64_t>();
  } catch (const std::exception& e) {
    throw DataError(where + ": malformed stored DP-APPR release: " + e.what());
  }
  return r;
}

std::vector<privacy::AccountantEvent> dp_appr_events(const DparSection& d, std::int64_t sources, double z) {
  using privacy::Mechanism;
  // K selections per row (a row of min(K, members) entries costs no more than K selections).
  const std::int64_t K = d.top_k;
  if (d.mechanism == "gm") return {{Mechanism::gaussian(z), sources}};
  std::vector<privacy::AccountantEvent> e{{Mechanism::exponential(z), sources * K}};
  if (d.mechanism == "em1") e.push_back({Mechanism::laplace(static_cast<double>(K) * z), sources * K});
  return e;
}

void fold_rows(std::vector<ApprRow>& rows, std::vector<std::int64_t>& folded,
               const std::function<bool(std::int64_t, std::int64_t)>& before) {
  const auto by_id = [](const ApprRow& a, const ApprRow& b) { return a.source < b.source; };
  if (before)
    std::sort(rows.begin(), rows.end(), [&](const ApprRow& a, const ApprRow& b) { return before(a.source, b.source); });
  else
    std::sort(rows.begin(), rows.end(), by_id);
  std::unordered_set<std::int64_t> taken;
  for (const auto& r : rows) taken.insert(r.source);
  folded.clear();
  for (auto& r : rows) {
    ApprRow kept{r.source, {}, {}};
    for (std::size_t k = 0; k < r.nodes.size(); ++k) {
      const std::int64_t v = r.nodes[k];
      if (v != r.source) {
        if (taken.count(v) > 0) continue;
        taken.insert(v);
        folded.push_back(v);
      } else if (std::find(kept.nodes.begin(), kept.nodes.end(), v) != kept.nodes.end()) {
        continue;
      }
      kept.nodes.push_back(v);
      kept.weights.push_back(r.weights[k]);
    }
    double total = 0.0;
    for (double w : kept.weights) total += w;
    if (kept.nodes.empty()) {
      kept.nodes = {r.source};
      kept.weights = {1.0};
    } else {
      for (double& w : kept.weights) w = total > 0 ? w / total : 1.0 / static_cast<double>(kept.weights.size());
    }
    r = std::move(kept);
  }
  std::sort(folded.begin(), folded.end());
  if (before) std::sort(rows.begin(), rows.end(), by_id);
}

std::int64_t occurrence_bound(const std::vector<ApprRow>& rows, const std::vector<std::int64_t>& folded) {
  std::unordered_map<std::int64_t, std::int64_t> others;  // node -> rows of other sources holding it
  for (const auto& r : rows)
    for (auto v : r.nodes)
      if (v != r.source) ++others[v];
  std::int64_t g = 1;
  for (const auto& [v, c] : others) {
    const bool own_example = !std::binary_search(folded.begin(), folded.end(), v);
    g = std::max(g, (own_example ? 1 : 0) + c);
  }
  return g;
}

std::int64_t graph_sample_size(const DparSection& d, std::int64_t training_nodes) {
  return std::max<std::int64_t>(1, std::llround(d.graph_sampling_rate * static_cast<double>(training_nodes)));
}

ApprRelease release_dp_appr(const DparSection& d, const partition::PartitionFile& pf, const partition::Shard& shard,
                            dist::Communicator& comm, const Secret& key, double z) {
  const auto start = std::chrono::steady_clock::now();
  const graph::DatasetReader reader(pf.path());
  TrainingIndex index(pf, reader);
  const std::int64_t U = index.size();
  ApprRelease out;
  out.universe = U;
  if (d.appr_nodes > U)
    throw UsageError("dpar.appr_nodes = " + std::to_string(d.appr_nodes) + " exceeds the " + std::to_string(U) +
                     " training nodes of " + pf.path());
  const Secret noise_key = derive_secret(key, 2, "dparnois");
  std::vector<std::int64_t> chosen;  // the sources' candidate indices (all, or with sampling this rank's)
  std::optional<HiddenSample> sample;
  if (d.graph_sampling_rate < 1.0) {
    // Graph sampling (Sec. 3.2): the m' smallest-hash training nodes; the sources are the
    // sample's first M in hash order, a uniform M-subset of it. Each rank hashes its own parts'
    // training nodes, a contiguous range of candidate indices.
    const std::int64_t m = graph_sample_size(d, U);
    if (d.appr_nodes > m)
      throw UsageError("dpar.appr_nodes = " + std::to_string(d.appr_nodes) + " exceeds the graph sample of " +
                       std::to_string(m) + " training nodes (dpar.graph_sampling_rate = " +
                       std::to_string(d.graph_sampling_rate) + " of " + std::to_string(U) + ")");
    sample = select_graph_sample(d, pf, index, comm, key);
    chosen = sample->owned_leading();
    out.universe = m;
    out.in_sample = [s = *sample](std::int64_t c) { return s.contains(c); };
  } else {
    // The sources: a key of their own, derived from the batch secret (hidden, on every rank).
    chosen = sampling::sample_batch_without_replacement(derive_secret(key, 1, "dparsrcs"), 0, U, d.appr_nodes);
  }

  sampling::ApprOptions ao;
  ao.alpha = d.alpha;
  ao.rho = d.rho;
  ao.epsilon = d.tolerance;
  sampling::TopKOptions to;
  to.mechanism = parse_topk(d.mechanism);
  to.k = d.top_k;
  if (to.mechanism == sampling::TopKMechanism::gm) {
    to.clip = d.gm_clip;
    to.noise_scale = z * std::sqrt(2.0) * d.gm_clip;  // sigma = z * (l2 sensitivity sqrt(2) C1)
  } else {
    to.clip = d.em_clip;
    to.noise_scale = z * d.em_clip;                                   // Gumbel beta = z C2
    to.value_noise_scale = static_cast<double>(d.top_k) * z * d.em_clip;  // Laplace b = K beta (em1)
  }

  // This rank's sources, as [source, K ids] and [K weights] per row.
  PartitionRows rows(reader, index, pf.num_nodes(), sample ? &*sample : nullptr);
  std::vector<std::int64_t> my_ids;
  std::vector<double> my_weights;
  // Every row reports min(K, members) entries (dp_topk.h): the number of members (the training
  // nodes, or the sample's size) is public, so the row length is too, and nothing private can
  // make the release stop.
  const std::int64_t K = std::min<std::int64_t>(d.top_k, sample ? sample->size() : U);
  for (auto c : chosen) {
    const std::int64_t source = index.node_of(c);
    if (!shard.owns(source)) continue;
    rows.next_source();
    const sampling::SparseVector p = sampling::appr_ista(rows, source, ao);
    sampling::SparseVector over_candidates;
    for (std::size_t i = 0; i < p.index.size(); ++i) {
      const std::int64_t cand = index.candidate_of(p.index[i]);
      if (cand < 0) throw Error("APPR reached a node outside the training graph", kExitInternal);
      over_candidates.index.push_back(cand);
      over_candidates.value.push_back(p.value[i]);
    }
    // candidate order follows node order, so the sorted contract of SparseVector holds
    SecureStream noise(noise_key, StreamPurpose::appr_noise, 0, static_cast<std::uint64_t>(source));
    const sampling::TopK top =
        sample ? sampling::dp_topk(over_candidates,
                                   sampling::TopKUniverse{U, sample->size(),
                                                          [&](std::int64_t c) { return sample->contains(c); }},
                                   to, noise)
               : sampling::dp_topk(over_candidates, U, to, noise);
    my_ids.push_back(source);
    for (auto cand : top.index) my_ids.push_back(index.node_of(cand));
    const auto w = weights_of(top.value);
    my_weights.insert(my_weights.end(), w.begin(), w.end());
  }
  out.rows_read = rows.rows_read();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // All-gather the rows (M (K + 1) ids and M K weights in all).
  const int W = comm.size();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(W));
  const std::int64_t mine = static_cast<std::int64_t>(my_ids.size()) / (K + 1);
  comm.allgather(&mine, counts.data(), 1);
  std::vector<std::size_t> id_counts(W), weight_counts(W);
  std::int64_t total = 0;
  for (int q = 0; q < W; ++q) {
    id_counts[q] = static_cast<std::size_t>(counts[q] * (K + 1));
    weight_counts[q] = static_cast<std::size_t>(counts[q] * K);
    total += counts[q];
  }
  std::vector<std::int64_t> all_ids(static_cast<std::size_t>(total * (K + 1)) + 1);
  std::vector<double> all_weights(static_cast<std::size_t>(total * K) + 1);
  my_ids.push_back(0);  // never a null buffer
  my_weights.push_back(0);
  comm.allgatherv(my_ids.data(), static_cast<std::size_t>(mine * (K + 1)), all_ids.data(), id_counts);
  comm.allgatherv(my_weights.data(), static_cast<std::size_t>(mine * K), all_weights.data(), weight_counts);
  if (total != d.appr_nodes) throw Error("DP-APPR: the ranks released " + std::to_string(total) + " rows of " +
                                             std::to_string(d.appr_nodes), kExitInternal);
  for (std::int64_t r = 0; r < total; ++r) {
    ApprRow row;
    row.source = all_ids[static_cast<std::size_t>(r * (K + 1))];
    for (std::int64_t k = 0; k < K; ++k) {
      row.nodes.push_back(all_ids[static_cast<std::size_t>(r * (K + 1) + 1 + k)]);
      row.weights.push_back(all_weights[static_cast<std::size_t>(r * K + k)]);
    }
    out.rows.push_back(std::move(row));
  }
  if (sample) {
    // Folded in a uniformly random order of the sources (a keyed hash of their ids), not by
    // id: the examples then depend on ids only through keyed values (dpar_appr.h).
    const Secret order_key = derive_secret(key, 4, "dparfold");
    fold_rows(out.rows, out.folded, [&](std::int64_t a, std::int64_t b) {
      return keyed_hash128(order_key, static_cast<std::uint64_t>(a)) <
             keyed_hash128(order_key, static_cast<std::uint64_t>(b));
    });
  } else {
    fold_rows(out.rows, out.folded);
  }
  out.occurrence_bound = occurrence_bound(out.rows, out.folded);
  return out;
}

std::unordered_map<std::int64_t, std::vector<float>> aggregated_features(const std::vector<ApprRow>& rows,
                                                                         const partition::PartitionFile& pf,
                                                                         const partition::Shard& shard,
                                                                         const std::string& input_norm) {
  const graph::DatasetReader reader(pf.path());
  const std::int64_t F = shard.meta.num_features;
  std::unordered_map<std::int64_t, std::vector<float>> out;
  for (const auto& r : rows) {
    if (!shard.owns(r.source)) continue;
    std::vector<double> acc(static_cast<std::size_t>(F), 0.0);
    for (std::size_t k = 0; k < r.nodes.size(); ++k) {
      std::vector<float> x = reader.read_features(r.nodes[k], r.nodes[k] + 1);
      normalize_feature_rows(x.data(), 1, F, input_norm);
      for (std::int64_t f = 0; f < F; ++f) acc[static_cast<std::size_t>(f)] += r.weights[k] * x[static_cast<std::size_t>(f)];
    }
    std::vector<float> row(acc.begin(), acc.end());
    out.emplace(r.source - shard.begin, std::move(row));
  }
  return out;
}

}  // namespace dpgnn::train
