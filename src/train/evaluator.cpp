#include "evaluator.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <vector>

#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/model/spmm.h"
#include "dpgnn/util/error.h"

namespace dpgnn::train {

Evaluator::Evaluator(const partition::Shard& shard, const dist::Collectives& comms, c10::Device device)
    : shard_(shard), comms_(comms), comm_(comms.host()), device_(device) {
  dist::Communicator& comm = comm_;
  const int W = comm.size();
  const std::int64_t n_local = shard.num_local();
  // Halo columns: local nodes first, then every rank's group in rank order.
  std::vector<std::int64_t> group_offset(W + 1, 0);
  for (int q = 0; q < W; ++q)
    group_offset[q + 1] = group_offset[q] + (q < static_cast<int>(shard.halo.size())
                                                 ? static_cast<std::int64_t>(shard.halo[q].nodes.size())
                                                 : 0);
  n_halo_ = group_offset[W];
  // CSR rows with int32 columns: local c -> c, halo node -> n_local + its place in the halo.
  if (n_local + n_halo_ > std::numeric_limits<std::int32_t>::max())
    throw DataError(shard.file, "", "a rank's local + halo nodes exceed 2^31 - 1");
  at::Tensor indptr = torch::empty({n_local + 1}, torch::kInt64);
  auto* iptr = indptr.data_ptr<std::int64_t>();
  std::int64_t entries = 0;
  for (std::int64_t i = 0; i < n_local; ++i)
    for (graph::NodeId u : shard.rows.out_neigh(i)) entries += u != shard.begin + i;
  at::Tensor indices = torch::empty({entries}, torch::kInt32);
  auto* cols = indices.data_ptr<std::int32_t>();
  std::int64_t pos = 0;
  iptr[0] = 0;
  for (std::int64_t i = 0; i < n_local; ++i) {
    const std::int64_t self = shard.begin + i;
    for (graph::NodeId u : shard.rows.out_neigh(i)) {
      if (u == self) continue;  // the model adds its own self connection
      std::int64_t col;
      if (shard.owns(u)) {
        col = u - shard.begin;
      } else {
        const int q = shard.owner_of(u);
        const auto& nodes = shard.halo[q].nodes;
        const auto it = std::lower_bound(nodes.begin(), nodes.end(), static_cast<std::int64_t>(u));
        if (it == nodes.end() || *it != u)
          throw Error("halo metadata misses neighbour " + std::to_string(u), kExitInternal);
        col = n_local + group_offset[q] + (it - nodes.begin());
      }
      cols[pos++] = static_cast<std::int32_t>(col);
    }
    iptr[i + 1] = pos;
  }
  adj_.indptr = indptr;
  adj_.indices = indices;
  adj_.num_rows = n_local;
  adj_.num_cols = n_local + n_halo_;
  std::vector<double> deg(shard.degrees.begin(), shard.degrees.end());
  for (int q = 0; q < W; ++q)
    if (q < static_cast<int>(shard.halo.size()))
      for (auto d : shard.halo[q].degrees) deg.push_back(static_cast<double>(d));
  degrees_ = torch::tensor(deg, torch::kFloat64).to(device);

  // Exchange plan: tell every owner which of its rows I need.
  std::vector<std::int64_t> my_counts(W, 0), all_counts(static_cast<std::size_t>(W) * W, 0);
  for (int q = 0; q < W; ++q) my_counts[q] = group_offset[q + 1] - group_offset[q];
  comm.allgather(my_counts.data(), all_counts.data(), static_cast<std::size_t>(W));
  recv_counts_.assign(W, 0);
  send_counts_.assign(W, 0);
  const int me = comm.rank();
  for (int q = 0; q < W; ++q) {
    recv_counts_[q] = static_cast<std::size_t>(my_counts[q]);                         // rows q sends me
    send_counts_[q] = static_cast<std::size_t>(all_counts[static_cast<std::size_t>(q) * W + me]);  // rows q needs
  }
  std::vector<std::int64_t> requests;
  for (int q = 0; q < W; ++q)
    if (q < static_cast<int>(shard.halo.size()))
      requests.insert(requests.end(), shard.halo[q].nodes.begin(), shard.halo[q].nodes.end());
  std::size_t total_send = 0;
  for (auto c : send_counts_) total_send += c;
  std::vector<std::int64_t> wanted(total_send);
  // I send requests (counts recv_counts_) and receive what others want from me (send_counts_).
  comm.alltoallv(requests.data(), recv_counts_, wanted.data(), send_counts_);
  for (auto& g : wanted) {
    if (!shard.owns(g)) throw Error("halo request for a node this rank does not own", kExitInternal);
    g -= shard.begin;
  }
  send_rows_ = torch::from_blob(wanted.data(), {static_cast<std::int64_t>(wanted.size())}, torch::kInt64)
                   .clone()
                   .to(device);
  const std::int64_t F = shard.meta.num_features;
  // On the CPU x_ aliases the shard's features (the shard outlives the evaluator): no copy.
  x_ = torch::from_blob(const_cast<float*>(shard.features.data()), {n_local, F}, torch::kFloat32).to(device);
}

at::Tensor Evaluator::exchange(const at::Tensor& h) {
  const std::int64_t d = h.size(1);
  const int W = static_cast<int>(send_counts_.size()), me = comm_.rank();
  // The rows stay on the model's device; comms_ moves them by the path for that memory.
  const auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(device_);
  // One row more than needed so that no buffer pointer is null when a count is 0.
  at::Tensor recv = torch::empty({n_halo_ + 1, d}, opts);
  std::vector<std::size_t> send_off(W + 1, 0), recv_off(W + 1, 0);
  for (int q = 0; q < W; ++q) {
    send_off[q + 1] = send_off[q] + send_counts_[q];
    recv_off[q + 1] = recv_off[q] + recv_counts_[q];
  }
  // W - 1 rounds, round k sending to me + k and receiving from me - k: only one peer's rows
  // are gathered at a time, so the send buffer is s/(W-1) rows, not all s (docs/memory.md).
  for (int k = 1; k < W; ++k) {
    const int to = (me + k) % W, from = (me - k + W) % W;
    const auto n_to = static_cast<std::int64_t>(send_counts_[to]);
    at::Tensor send = n_to > 0 ? h.index_select(0, send_rows_.narrow(0, static_cast<std::int64_t>(send_off[to]), n_to))
                                     .to(device_, torch::kFloat32)
                                     .contiguous()
                               : torch::empty({1, d}, opts);
    std::vector<std::size_t> sc(W, 0), rc(W, 0);
    sc[to] = send_counts_[to] * static_cast<std::size_t>(d);
    rc[from] = recv_counts_[from] * static_cast<std::size_t>(d);
    comms_.alltoallv(send.data_ptr<float>(), sc, recv.data_ptr<float>() + recv_off[from] * static_cast<std::size_t>(d), rc);
  }
  return recv.narrow(0, 0, n_halo_).to(device_, h.scalar_type());
}

at::Tensor Evaluator::propagate(const at::Tensor& h, int steps, const std::vector<int>& record,
                                std::vector<at::Tensor>* recorded) {
  // D^{-1} over the local rows; an isolated node keeps alpha H (its argmax is unchanged).
  const std::int64_t n_local = adj_.num_rows;
  const at::Tensor deg = degrees_.narrow(0, 0, n_local);
  const at::Tensor inv_deg = torch::where(deg > 0, 1.0 / deg.clamp_min(1.0), torch::zeros_like(deg)).to(h.scalar_type());
  at::Tensor z = h;
  auto keep = [&](int p) {
    if (recorded != nullptr && std::find(record.begin(), record.end(), p) != record.end()) recorded->push_back(z);
  };
  keep(0);
  for (int p = 1; p <= steps; ++p) {
    z = model::csr_spmm(adj_, z, exchange(z), at::Tensor(), inv_deg).mul_(1.0 - propagation_alpha_).add_(h, propagation_alpha_);
    keep(p);
  }
  return z;
}

at::Tensor Evaluator::posterior(const at::Tensor& probabilities, const at::Tensor& rows, const at::Tensor& labels) const {
  // Bayes' rule on the rows with a released label: prior (the model's softmax) times the k-RR
  // likelihood (q at the released class, (1 - q)/(k - 1) elsewhere), renormalised.
  at::Tensor h = probabilities.clone();
  if (rows.numel() == 0) return h;
  const double other = (1.0 - keep_probability_) / static_cast<double>(categories_ - 1);
  at::Tensor like = torch::full({rows.size(0), h.size(1)}, other, h.options());
  like.scatter_(1, labels.unsqueeze(1), keep_probability_);
  at::Tensor post = h.index_select(0, rows).mul_(like);
  post.div_(post.sum(1, true));
  h.index_copy_(0, rows, post);
  return h;
}

namespace {
// With released labels the model's outputs enter Bayes' rule as softmax(h / 2): DP-SGD's model
// is more confident than it is right (at epsilon 8 on Cora its own predictions are 50% right),
// so at temperature 1 its prior outweighed the released labels' evidence and its own errors
// spread through the propagation. Chosen on the shared graphs (docs/results.md, "Issue 37: the
// model's prior softened"): Cora 0.826 -> 0.853 offline, Facebook +1 point, the others level.
constexpr double kModelPriorTemperature = 2.0;
// Not 0: the scored nodes are training nodes, on which the model's own prediction is better
// than elsewhere (it was fitted to them), so their agreement would favour no propagation too
// much (on the Twitch graphs it chose 0 where 0 was below every other choice on test nodes,
// docs/results.md); every choice here mixes the neighbours in.
constexpr int kStepChoices[] = {1, 2, 4, 8};
}

int Evaluator::choose_steps(const at::Tensor& probabilities) {
  const at::Tensor give = evidence_half_, score = evidence_half_.logical_not();
  const at::Tensor given = posterior(probabilities, evidence_rows_.index({give}), evidence_labels_.index({give}));
  const at::Tensor scored_rows = evidence_rows_.index({score}), scored_labels = evidence_labels_.index({score});
  const std::vector<int> choices(std::begin(kStepChoices), std::end(kStepChoices));
  std::vector<at::Tensor> z;
  propagate(given, choices.back(), choices, &z);
  // Agreement counts of every choice, summed over the ranks.
  std::vector<double> agree(choices.size(), 0.0);
  for (std::size_t c = 0; c < choices.size(); ++c)
    if (scored_rows.numel() > 0)
      agree[c] = z[c].index_select(0, scored_rows).argmax(1).eq(scored_labels).sum().item<double>();
  comm_.allreduce_sum(agree.data(), agree.size());
  std::size_t best = 0;
  for (std::size_t c = 1; c < choices.size(); ++c) {
    const bool closer = std::abs(choices[c] - propagation_steps_) < std::abs(choices[best] - propagation_steps_);
    if (agree[c] > agree[best] || (agree[c] == agree[best] && closer)) best = c;
  }
  if (comm_.rank() == 0) {
    std::string scores;
    for (std::size_t c = 0; c < choices.size(); ++c)
      scores += (c ? ", " : "") + std::to_string(choices[c]) + ": " + std::to_string(static_cast<std::int64_t>(agree[c]));
    spdlog::info("inference: {} power-iteration steps, chosen on the released labels (agreement of the scored half "
                 "by steps: {})", choices[best], scores);
  }
  return choices[best];
}

at::Tensor Evaluator::logits(const model::Gnn& model) {
  torch::NoGradGuard no_grad;
  at::Tensor h = x_.to(model.dtype());
  const model::Gnn::HaloExchange halo = [this](const at::Tensor& t) { return exchange(t); };
  for (int l = 0; l < model.num_layers(); ++l) h = model.layer_forward_csr(l, h, adj_, degrees_, halo);
  if (center_) h = centered(h);
  if (categories_ == 0) {  // no released labels: the model's outputs, propagated as configured
    last_steps_ = propagation_steps_;
    if (propagation_steps_ == 0) return h;
    if (!keep_shares_) return propagate(h, propagation_steps_);
    const double share1 = column_means(torch::softmax(h.to(torch::kFloat64), 1))[1];
    return with_class_share(propagate(h, propagation_steps_), share1);
  }
  // Released labels: probabilities, the evidence by Bayes' rule, then the propagation.
  const at::Tensor prior = torch::softmax(h / kModelPriorTemperature, 1);
  last_steps_ = choose_steps_ ? choose_steps(prior) : propagation_steps_;
  const at::Tensor z = propagate(posterior(prior, evidence_rows_, evidence_labels_), last_steps_);
  return torch::log(z.clamp_min(1e-30));
}

void Evaluator::set_label_evidence(std::int64_t categories, double keep_probability,
                                   const std::vector<std::int64_t>& nodes, const std::vector<std::int64_t>& labels,
                                   bool choose_steps) {
  if (categories < 2 || !(keep_probability > 0 && keep_probability < 1) || nodes.size() != labels.size())
    throw Error("Evaluator::set_label_evidence: needs >= 2 categories, a keep probability in (0, 1) and one label per node",
                kExitInternal);
  std::vector<std::int64_t> rows, ys;
  for (std::int64_t i = 0; i < shard_.num_local(); ++i) {
    const auto it = std::lower_bound(nodes.begin(), nodes.end(), shard_.new_to_old[i]);
    if (it == nodes.end() || *it != shard_.new_to_old[i]) continue;
    rows.push_back(i);
    ys.push_back(labels[static_cast<std::size_t>(it - nodes.begin())]);
  }
  const auto n = static_cast<std::int64_t>(rows.size());
  evidence_rows_ = torch::from_blob(rows.data(), {n}, torch::kInt64).clone().to(device_);
  evidence_labels_ = torch::from_blob(ys.data(), {n}, torch::kInt64).clone().to(device_);
  // The half whose labels give evidence when the steps are chosen: a fixed hash of the dataset
  // id (Fibonacci hashing, top bit), independent of the partition and the rank count.
  std::vector<std::uint8_t> half(rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k)
    half[k] = static_cast<std::uint8_t>(
        (static_cast<std::uint64_t>(shard_.new_to_old[rows[k]]) * 0x9E3779B97F4A7C15ULL) >> 63);
  evidence_half_ = torch::from_blob(half.data(), {n}, torch::kUInt8).clone().to(torch::kBool).to(device_);
  keep_probability_ = keep_probability;
  categories_ = categories;
  choose_steps_ = choose_steps;
}

void Evaluator::set_propagation(int steps, double alpha, bool center, bool keep_shares) {
  if (steps < 0 || !(alpha > 0.0 && alpha < 1.0))
    throw Error("Evaluator::set_propagation: steps must be >= 0 and alpha in (0, 1)", kExitInternal);
  if (keep_shares && (shard_.meta.multilabel || shard_.meta.num_classes != 2))
    throw Error("Evaluator::set_propagation: keeping the class shares needs single-label data with two classes",
                kExitInternal);
  propagation_steps_ = steps;
  propagation_alpha_ = alpha;
  center_ = center;
  keep_shares_ = keep_shares;
}

std::vector<double> Evaluator::column_means(const at::Tensor& h) const {
  // Column sums of the local rows and the local row count, summed over the ranks, in double.
  const std::int64_t C = h.size(1);
  const at::Tensor local = h.sum(0).to(torch::kCPU, torch::kFloat64).contiguous();
  std::vector<double> sums(local.data_ptr<double>(), local.data_ptr<double>() + C);
  sums.push_back(static_cast<double>(h.size(0)));
  comm_.allreduce_sum(sums.data(), sums.size());
  const double nodes = sums.back();
  sums.pop_back();
  for (double& v : sums) v = nodes > 0 ? v / nodes : 0.0;
  return sums;
}

at::Tensor Evaluator::with_class_share(const at::Tensor& z, double share1) const {
  // With two classes the mean probability of class 1 after an offset b on its logit is
  // mean_i sigmoid(z_i1 - z_i0 + b), increasing in b: bracket the target, then bisect. Every
  // rank takes the same steps (each comparison reads the collective mean).
  if (!(share1 > 0.0 && share1 < 1.0)) return z;  // a model certain of one class: nothing to match
  const at::Tensor d = (z.select(1, 1) - z.select(1, 0)).to(torch::kFloat64);
  const auto share_at = [&](double b) { return column_means(torch::sigmoid(d + b).unsqueeze(1))[0]; };
  const double target = std::log(share1 / (1.0 - share1));
  // Move `bound` in `direction` (-1 down, +1 up) by doubling steps until the target lies on its side.
  const auto widen = [&](double& bound, double direction) {
    for (double step = 1.0; (share_at(bound) - share1) * direction < 0; step *= 2.0) {
      bound += direction * step;
      if (step > 1e12)
        throw Error("Evaluator: the class-share offset did not bracket (non-finite outputs?)", kExitInternal);
    }
  };
  double lo = target - 1.0, hi = target + 1.0;
  widen(lo, -1.0);
  widen(hi, +1.0);
  for (int it = 0; it < 100 && hi - lo > 1e-12 * (1.0 + std::abs(lo)); ++it) {
    const double mid = 0.5 * (lo + hi);
    (share_at(mid) < share1 ? lo : hi) = mid;
  }
  const double offset = 0.5 * (lo + hi);
  if (comm_.rank() == 0)
    spdlog::info("inference: class shares kept at the model's ({:.4f}, {:.4f}): class 1 offset {:.4g} after the "
                 "propagation",
                 1.0 - share1, share1, offset);
  at::Tensor out = z.clone();
  out.select(1, 1).add_(offset);
  return out;
}

at::Tensor Evaluator::centered(const at::Tensor& h) const {
  const at::Tensor mean = torch::tensor(column_means(h), torch::kFloat64).to(h.device(), h.scalar_type());
  return h - mean.unsqueeze(0);
}

EvalResult Evaluator::evaluate(const model::Gnn& model) { return metrics(model.predict(logits(model)).to(torch::kCPU)); }

EvalResult Evaluator::metrics(const at::Tensor& pred) {
  const auto& s = shard_;
  const auto& meta = s.meta;
  // [val correct/TP, val total/FP, val FN, test ..., ...]
  std::vector<double> acc(6, 0.0);
  const std::int64_t n = s.num_local();
  if (!meta.multilabel) {
    const auto* p = pred.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < n; ++i) {
      const bool ok = p[i] == s.labels[i];
      if (s.val_mask[i]) { acc[0] += ok; acc[1] += 1; }
      if (s.test_mask[i]) { acc[3] += ok; acc[4] += 1; }
    }
  } else {
    const auto* p = pred.data_ptr<std::int64_t>();
    const std::int64_t C = meta.num_classes;
    for (std::int64_t i = 0; i < n; ++i) {
      const int base = s.val_mask[i] ? 0 : s.test_mask[i] ? 3 : -1;
      if (base < 0) continue;
      for (std::int64_t c = 0; c < C; ++c) {
        const bool yp = p[i * C + c] != 0, yt = s.label_matrix[i * C + c] != 0;
        acc[base] += yp && yt;
        acc[base + 1] += yp && !yt;
        acc[base + 2] += !yp && yt;
      }
    }
  }
  comm_.allreduce_sum(acc.data(), acc.size());
  EvalResult r;
  auto metric = [&](int b) {
    if (!meta.multilabel) return acc[b + 1] > 0 ? acc[b] / acc[b + 1] : 0.0;
    const double denom = 2 * acc[b] + acc[b + 1] + acc[b + 2];
    return denom > 0 ? 2 * acc[b] / denom : 0.0;  // micro-F1 = 2TP / (2TP + FP + FN)
  };
  r.val = metric(0);
  r.test = metric(3);
  r.val_nodes = static_cast<std::int64_t>(meta.multilabel ? 0 : acc[1]);
  r.test_nodes = static_cast<std::int64_t>(meta.multilabel ? 0 : acc[4]);
  return r;
}

}  // namespace dpgnn::train
