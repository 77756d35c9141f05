// `dpgnn audit` (include/dpgnn/train/audit.h has the design; docs/audit.md the reading).
// Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023:
// Algorithm 1 (insert each canary with probability 1/2, train once, score, guess the top and
// bottom scores, abstain on the rest) with the bound of their Theorem 3 (privacy/audit_bound.h).
#include "dpgnn/train/audit.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/graph/dataset.h"
#include "dpgnn/model/batch.h"
#include "dpgnn/model/gnn.h"
#include "dpgnn/model/graph_block.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/partition/partition_writer.h"
#include "dpgnn/privacy/audit_bound.h"
#include "dpgnn/noise/discrete_gaussian.h"
#include "dpgnn/util/error.h"
#include "methods/method.h"
#include "dpgnn/util/hdf5.h"
#include "dpgnn/util/remove_tree.h"
#include "dpgnn/util/secure_rng.h"

namespace dpgnn::train {
namespace fs = std::filesystem;

namespace {

// The canary coins: one fair bit per canary from the OS's secure randomness, never derived
// from the config, so the auditor (and the trainer) cannot know them.
std::vector<std::uint8_t> secret_coins(std::int64_t n) {
  std::vector<std::uint8_t> coins(static_cast<std::size_t>(n));
  SecureStream stream(random_secret(), StreamPurpose::audit_coins, 0);
  for (auto& coin : coins) coin = static_cast<std::uint8_t>(stream.bits(1));
  return coins;
}

// The two labels canary i can have: "included" gives it label_in, "excluded" label_out.
std::int64_t label_in(std::int64_t i, std::int64_t classes) { return i % classes; }
std::int64_t label_out(std::int64_t i, std::int64_t classes) { return (i + 1) % classes; }

// The original dataset with N isolated canary nodes and N canary feature columns appended
// (audit.h). Reads the whole dataset: the audit is meant for graphs that fit one process.
graph::Dataset with_canaries(const graph::Dataset& d, const std::vector<std::uint8_t>& coins, double scale) {
  const std::int64_t n0 = d.meta.num_nodes, f0 = d.meta.num_features, c = d.meta.num_classes;
  const auto nc = static_cast<std::int64_t>(coins.size());
  const std::int64_t n = n0 + nc, f = f0 + nc;
  graph::Dataset out;
  out.meta = d.meta;
  out.meta.name = d.meta.name + "+canaries";
  out.meta.source = "dpgnn audit: " + std::to_string(nc) + " canaries appended to " + d.meta.file;
  out.meta.num_features = f;
  std::vector<graph::EdgeIdx> indptr = d.graph.indptr();
  indptr.resize(static_cast<std::size_t>(n + 1), indptr.back());  // canaries: no edges
  out.graph = graph::CsrGraph(std::move(indptr), d.graph.indices(), n);
  out.features.assign(static_cast<std::size_t>(n * f), 0.0f);
  for (std::int64_t v = 0; v < n0; ++v)
    std::copy_n(d.features.begin() + v * f0, f0, out.features.begin() + v * f);
  auto label = [&](std::int64_t i) {
    return coins[static_cast<std::size_t>(i)] ? label_in(i, c) : label_out(i, c);
  };
  for (std::int64_t i = 0; i < nc; ++i) out.features[static_cast<std::size_t>((n0 + i) * f + f0 + i)] = static_cast<float>(scale);
  if (d.meta.multilabel) {
    out.label_matrix = d.label_matrix;
    out.label_matrix.resize(static_cast<std::size_t>(n * c), 0);
    for (std::int64_t i = 0; i < nc; ++i) out.label_matrix[static_cast<std::size_t>((n0 + i) * c + label(i))] = 1;
  } else {
    out.labels = d.labels;
    for (std::int64_t i = 0; i < nc; ++i) out.labels.push_back(label(i));
  }
  out.train_mask = d.train_mask;
  out.train_mask.resize(static_cast<std::size_t>(n), 1);
  out.val_mask = d.val_mask;
  out.val_mask.resize(static_cast<std::size_t>(n), 0);
  out.test_mask = d.test_mask;
  out.test_mask.resize(static_cast<std::size_t>(n), 0);
  return out;
}

// The model the trainer builds for this config and dataset (trainer.cpp "model, optimiser"):
// same architecture rule and the public init seed, so its parameters are the initial ones.
model::Gnn initial_model(const Config& cfg, const graph::DatasetMeta& meta) {
  return model::Gnn(methods::model_config(cfg, meta), cfg.train.seed, c10::kCPU);
}

// Whether the audited run's model was made by a release instead of steps from the initial
// parameters (DPAR's class sums, MethodSpec::takes_steps): read from the config the run bound
// itself to (run.json), which holds the choice dpar.learner auto made.
bool release_made_the_model(const fs::path& run_dir) {
  std::ifstream in(run_dir / "run.json");
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.contains("binding"))
    throw Error((run_dir / "run.json").string() + ": the audited run's binding is missing", kExitInternal);
  const Config bound = parse_config(j.at("binding").at("config").get<std::string>(), (run_dir / "run.json").string(), {});
  return !methods::method_spec(bound.method_enum()).takes_steps(bound);
}

// The released parameters (model.h5, one dataset per parameter name) into `net`.
void load_model_file(const std::string& path, model::Gnn& net) {
  auto f = h5::File::open_read(path);
  at::Tensor flat = net.flatten();
  const auto views = net.split_flat(flat);
  for (std::size_t i = 0; i < views.size(); ++i) {
    const std::string name = "/" + net.parameter_names()[i];
    const auto values = f.open_dataset(name).read_all<double>();
    if (static_cast<std::int64_t>(values.size()) != views[i].numel())
      throw DataError(path, name, "holds " + std::to_string(values.size()) + " values, the model needs " +
                                      std::to_string(views[i].numel()));
    views[i].copy_(torch::from_blob(const_cast<double*>(values.data()), views[i].sizes(), torch::kFloat64));
  }
  net.unflatten(flat);
}

// The canaries as one training batch (the included inputs scale * e_{F+i}, labels i mod C,
// each its own one-node subgraph), for the forward pass of the model.
model::Batch canary_batch(std::int64_t f0, std::int64_t nc, double scale, const model::ModelConfig& mc, bool in) {
  at::Tensor x = torch::zeros({nc, f0 + nc}, torch::kFloat32);
  x.narrow(1, f0, nc).copy_(torch::eye(nc, torch::kFloat32) * scale);
  std::vector<std::int64_t> ptr(static_cast<std::size_t>(nc + 1)), root(static_cast<std::size_t>(nc)), key(root.size()),
      y(root.size());
  std::vector<float> y_multi;
  for (std::int64_t i = 0; i < nc; ++i) {
    ptr[static_cast<std::size_t>(i + 1)] = i + 1;
    root[static_cast<std::size_t>(i)] = i;
    key[static_cast<std::size_t>(i)] = i;
    y[static_cast<std::size_t>(i)] = in ? label_in(i, mc.num_classes) : label_out(i, mc.num_classes);
  }
  if (mc.multilabel) {
    y_multi.assign(static_cast<std::size_t>(nc * mc.num_classes), 0.0f);
    for (std::int64_t i = 0; i < nc; ++i)
      y_multi[static_cast<std::size_t>(i * mc.num_classes + static_cast<std::int64_t>(y[static_cast<std::size_t>(i)]))] = 1.0f;
    y.clear();
  }
  return model::make_batch(x, ptr, root, key, {}, {}, mc.multilabel, mc.num_classes, y, y_multi);
}

// Indices (in parameters()) of layer 0's weights on the input features: "layers.0.weight"
// (gcn, mlp), lin_self and lin_neigh (sage), mlp.0 (gin); not gin's inner mlp.1.
std::vector<std::size_t> input_weights(const model::Gnn& net) {
  std::vector<std::size_t> out;
  const auto& names = net.parameter_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& p = net.parameters()[i];
    if (net.parameter_layers()[i] != 0 || p.dim() != 2 || p.size(1) != net.config().in_features) continue;
    if (names[i].find("mlp.1") != std::string::npos) continue;
    out.push_back(i);
  }
  return out;
}

// The canary columns [F, F+N) of the input weights, stacked: [W, d_out, N] for W weights.
at::Tensor canary_columns(const model::Gnn& net, const std::vector<std::size_t>& weights, std::int64_t f0,
                          std::int64_t nc) {
  std::vector<at::Tensor> cols;
  for (auto w : weights) cols.push_back(net.parameters()[w].detach().narrow(1, f0, nc).to(torch::kFloat64));
  return torch::stack(cols);
}

void set_canary_columns(model::Gnn& net, const std::vector<std::size_t>& weights, std::int64_t f0, std::int64_t nc,
                        const at::Tensor& cols) {
  at::Tensor flat = net.flatten();
  const auto views = net.split_flat(flat);
  for (std::size_t k = 0; k < weights.size(); ++k) views[weights[k]].narrow(1, f0, nc).copy_(cols[static_cast<std::int64_t>(k)]);
  net.unflatten(flat);
}

// The gradient of canary i's loss with respect to its own columns, for every i at once:
// [W, d_out, N]. Only canary i is non-zero in column F+i, so d(sum of losses)/d(column F+i)
// is canary i's own gradient; it is A[i, F+i] G[i] for each layer-0 map A -> A W^T.
at::Tensor canary_gradients(const model::Gnn& net, const model::Batch& batch, const std::vector<std::size_t>& weights,
                            std::int64_t f0, std::int64_t nc) {
  const model::TrainForward fw = net.forward_train(batch, model::DropoutKey{0, 0}, /*record_maps=*/true);
  std::vector<at::Tensor> outputs;
  std::vector<const model::LinearMapRecord*> maps;
  for (const auto& m : fw.maps)
    if (m.layer == 0 && m.weight >= 0) {
      outputs.push_back(m.output);
      maps.push_back(&m);
    }
  const auto grads = torch::autograd::grad({fw.loss_sum}, outputs);
  const std::int64_t rows = net.parameters()[weights.front()].size(0);
  at::Tensor out = torch::zeros({static_cast<std::int64_t>(weights.size()), rows, nc}, torch::kFloat64);
  for (std::size_t k = 0; k < maps.size(); ++k) {
    const auto pos = std::find(weights.begin(), weights.end(), static_cast<std::size_t>(maps[k]->weight)) - weights.begin();
    if (pos == static_cast<std::ptrdiff_t>(weights.size())) continue;
    // A[i, F+i] for each canary i (the diagonal of the canary block of the map's input).
    const at::Tensor a = maps[k]->input.detach().narrow(1, f0, nc).diagonal().to(torch::kFloat64);  // [N]
    const at::Tensor g = grads[k].detach().to(torch::kFloat64);                                     // [N, rows]
    out[pos] += (g * a.unsqueeze(1)).t();
  }
  return out;
}

// Score of each canary (audit.h): the displacement of its columns from their initial values,
// projected on the unit direction that moves its loss under the "included" label down and
// under the "excluded" label up (-grad L_in + grad L_out), evaluated with its columns at the
// initial value, halfway and at the final value (the direction turns as the rest of the
// model trains) and averaged. A positive score says "included".
std::vector<double> canary_scores(const model::Gnn& initial, model::Gnn& final_net, std::int64_t f0, std::int64_t nc,
                                  double scale) {
  const auto weights = input_weights(final_net);
  const model::Batch batch_in = canary_batch(f0, nc, scale, final_net.config(), true);
  const model::Batch batch_out = canary_batch(f0, nc, scale, final_net.config(), false);
  const at::Tensor c0 = canary_columns(initial, weights, f0, nc);
  const at::Tensor c1 = canary_columns(final_net, weights, f0, nc);
  const at::Tensor delta = c1 - c0;  // [W, rows, N]
  at::Tensor direction = torch::zeros_like(delta);
  auto unit = [](const at::Tensor& v) { return v / v.pow(2).sum(at::IntArrayRef{0, 1}).sqrt().clamp_min(1e-30); };
  for (double t : {0.0, 0.5, 1.0}) {
    set_canary_columns(final_net, weights, f0, nc, c0 + t * delta);
    const at::Tensor g_in = canary_gradients(final_net, batch_in, weights, f0, nc);
    const at::Tensor g_out = canary_gradients(final_net, batch_out, weights, f0, nc);
    direction += unit(g_out - g_in);
  }
  set_canary_columns(final_net, weights, f0, nc, c1);
  const at::Tensor s = (delta * unit(direction)).sum(at::IntArrayRef{0, 1}).contiguous();
  return std::vector<double>(s.data_ptr<double>(), s.data_ptr<double>() + nc);
}

struct Evaluated {
  GuessCandidate pick;
  privacy::AuditCounts counts;
  double bound = 0.0;
};

// Guesses from the scores for each candidate; the best bound at confidence 1 - beta / K
// (union bound over the K candidates).
Evaluated best_guesses(const std::vector<double>& scores, const std::vector<std::uint8_t>& coins, double delta,
                       double beta) {
  const auto n = static_cast<std::int64_t>(scores.size());
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // Descending score; ties by index, which says nothing about the coins.
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)];
  });
  const auto candidates = audit_guess_candidates(n);
  const double beta_each = beta / static_cast<double>(std::max<std::size_t>(1, candidates.size()));
  Evaluated best;
  best.counts.canaries = n;
  for (const auto& c : candidates) {
    std::int64_t correct = 0;
    for (std::int64_t k = 0; k < c.positive; ++k) correct += coins[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
    for (std::int64_t k = 0; k < c.negative; ++k)
      correct += 1 - coins[static_cast<std::size_t>(order[static_cast<std::size_t>(n - 1 - k)])];
    const privacy::AuditCounts counts{n, c.positive + c.negative, correct};
    const double bound = privacy::audit_epsilon_lower_bound(counts, delta, beta_each);
    if (bound > best.bound || best.counts.guesses == 0) best = {c, counts, bound};
  }
  return best;
}

// Rank 0 does `fn`; every rank learns whether it failed and fails alike (no hang).
template <class Fn>
void on_rank0(dist::Communicator& comm, Fn&& fn) {
  std::int64_t code = 0;
  std::string message;
  if (comm.rank() == 0) {
    try {
      fn();
    } catch (const Error& e) {
      code = e.exit_code();
      message = e.what();
    } catch (const std::exception& e) {
      code = kExitInternal;
      message = std::string("internal error: ") + e.what();
    }
  }
  comm.broadcast(&code, 1, 0);
  if (code != 0) throw CollectiveError(message, static_cast<int>(code), comm.rank() == 0);
}

}  // namespace

nlohmann::json audit_json(const AuditResult& r) {
  nlohmann::json j = {{"method", r.run.method},
                      {"private", r.is_private},
                      {"epsilon", r.epsilon},
                      {"delta", r.delta},
                      {"epsilon_lower_bound", r.epsilon_lower_bound},
                      {"confidence", r.confidence},
                      {"canaries", r.canaries},
                      {"included", r.included},
                      {"guesses", r.guesses},
                      {"positive_guesses", r.positive_guesses},
                      {"negative_guesses", r.guesses - r.positive_guesses},
                      {"correct_guesses", r.correct},
                      {"guess_candidates", r.candidates},
                      {"threat_model", "white-box final model"},
                      {"canary", "input-space Dirac"},
                      {"steps", r.run.steps},
                      {"subgraphs", r.run.subgraphs},
                      {"batch_size", r.run.batch_size},
                      {"noise_multiplier", r.run.noise_multiplier},
                      {"optimizer", r.optimizer}};
  if (!r.accounted) j["epsilon"] = nullptr;  // no claim to check
  return j;
}

std::vector<GuessCandidate> audit_guess_candidates(std::int64_t canaries) {
  // Fixed before training: k = N/20 "included" guesses at the top of the scores and k
  // "excluded" at the bottom, abstaining on the other 90%. One candidate, so no union bound
  // is needed; on Cora with drw this k gave the best bounds of N/40, N/20, N/10 and N/4.
  const std::int64_t k = std::max<std::int64_t>(1, canaries / 20);
  return {{k, k}};
}

namespace {

// The canary dataset's secrets, at rank 0: which canaries are in, and the original width.
struct Canaries {
  std::vector<std::uint8_t> coins;
  std::int64_t f0 = 0;
};

// ---- the canary dataset (rank 0 writes, the others read it through run_training) -------
Canaries write_canary_dataset(const Config& cfg, const AuditOptions& opt, const fs::path& out,
                              const std::string& dataset_path, const std::string& partition_path,
                              dist::Communicator& comm) {
  Canaries c;
  on_rank0(comm, [&] {
    if (fs::exists(out) && !fs::is_empty(out))
      throw UsageError(out.string() + ": the audit directory is not empty; choose another --out");
    fs::create_directories(out / "data");
    const graph::Dataset original = graph::read_dataset(cfg.data.dataset);
    // N canary columns on every node: refuse a feature matrix that would not fit (the audit is
    // for graphs like Cora; docs/audit.md "Limits").
    const double bytes = 4.0 * static_cast<double>(original.meta.num_nodes + opt.canaries) *
                         static_cast<double>(original.meta.num_features + opt.canaries);
    if (bytes > 4.0 * (1ULL << 30) || original.meta.num_nodes + opt.canaries > graph::kMaxNodes)
      throw UsageError("dpgnn audit: " + std::to_string(opt.canaries) + " canaries on " + cfg.data.dataset + " (" +
                       std::to_string(original.meta.num_nodes) + " nodes, " +
                       std::to_string(original.meta.num_features) + " features) need a feature matrix of " +
                       std::to_string(static_cast<std::int64_t>(bytes / (1 << 20))) +
                       " MiB (limit 4 GiB); use fewer --canaries or a smaller graph");
    c.f0 = original.meta.num_features;
    c.coins = secret_coins(opt.canaries);
    graph::write_dataset(with_canaries(original, c.coins, opt.canary_scale), dataset_path);
    if (!partition_path.empty()) {
      // The same kind of partition as the config's, remade over the augmented graph (the
      // canaries are isolated, so they change no edge cut).
      const auto pf = partition::PartitionFile::open(cfg.data.partition);
      partition::PartitionOptions po;
      // A PT-Scotch partition is remade with METIS here (one process): the same kind, structure-aware.
      po.method = pf.method() == "ptscotch" ? partition::Method::metis : partition::parse_method(pf.method());
      po.num_parts = pf.num_parts();
      po.seed = pf.seed();
      po.imbalance = pf.imbalance();
      partition::partition_dataset(dataset_path, partition_path, po);
    }
  });
  return c;
}

// The audited run's config: the user's, on the canary dataset, with plain SGD.
Config audited_config(const Config& cfg, const std::string& dataset_path, const std::string& partition_path) {
  Config run_cfg = cfg;
  // Plain SGD for the audited run (docs/audit.md, "Why SGD"): Adam divides every coordinate
  // by its noise level, so the noise alone moves each weight by about lr per step; the
  // canaries' activations then drift far from the initial model, their softmax saturates and
  // the shared weights take half their clipped gradient, which cut the measured signal in
  // half on Cora. The optimiser only post-processes the noisy gradient sum, so the
  // accountant's epsilon is the same.
  if (run_cfg.train.optimizer == "adam") {
    run_cfg.train.optimizer = "sgd";
    run_cfg.train.momentum = 0.0;
  }
  run_cfg.data.dataset = dataset_path;
  run_cfg.data.partition = partition_path;
  return run_cfg;
}

// ---- score and bound (rank 0: the white-box final-model attacker) --------------------------
void score_canaries(const Config& cfg, const Config& run_cfg, const AuditOptions& opt, const fs::path& out,
                    const std::string& dataset_path, const Canaries& c, dist::Communicator& comm, AuditResult& res) {
  double numbers[7] = {0, 0, 0, 0, 0, 0, 0};
  on_rank0(comm, [&] {
    const auto meta = graph::DatasetReader(dataset_path).meta();
    model::Gnn initial = initial_model(run_cfg, meta);
    // A model a release made never held the initial parameters: its displacement is from zero.
    if (release_made_the_model(out / "run")) initial.unflatten(torch::zeros_like(initial.flatten()));
    model::Gnn trained = initial_model(run_cfg, meta);
    load_model_file((out / "run" / "model.h5").string(), trained);
    const auto scores = canary_scores(initial, trained, c.f0, opt.canaries, opt.canary_scale);
    const Evaluated best = best_guesses(scores, c.coins, cfg.privacy.delta, 1.0 - opt.confidence);
    const auto included = std::count(c.coins.begin(), c.coins.end(), std::uint8_t{1});
    numbers[0] = best.bound;
    numbers[1] = static_cast<double>(included);
    numbers[2] = static_cast<double>(best.counts.guesses);
    numbers[3] = static_cast<double>(best.pick.positive);
    numbers[4] = static_cast<double>(best.counts.correct);
    numbers[5] = static_cast<double>(audit_guess_candidates(opt.canaries).size());
    // The coins and scores are written only now, after the guesses.
    std::ofstream csv(out / "canaries.csv");
    csv << "canary,included,score\n";
    for (std::int64_t i = 0; i < opt.canaries; ++i)
      csv << i << "," << static_cast<int>(c.coins[static_cast<std::size_t>(i)]) << ","
          << scores[static_cast<std::size_t>(i)] << "\n";
    if (!csv.flush()) throw IoError((out / "canaries.csv").string() + ": cannot write");
  });
  comm.broadcast(numbers, 7, 0);
  res.epsilon_lower_bound = numbers[0];
  res.included = static_cast<std::int64_t>(numbers[1]);
  res.guesses = static_cast<std::int64_t>(numbers[2]);
  res.positive_guesses = static_cast<std::int64_t>(numbers[3]);
  res.correct = static_cast<std::int64_t>(numbers[4]);
  res.candidates = static_cast<std::int64_t>(numbers[5]);
}

}  // namespace

AuditResult run_audit(const Config& cfg, const AuditOptions& opt, const dist::Collectives& comms) {
  dist::Communicator& comm = comms.host();
  if (opt.canaries < 2) throw UsageError("dpgnn audit: --canaries must be at least 2, got " + std::to_string(opt.canaries));
  if (!(opt.confidence > 0.0 && opt.confidence < 1.0))
    throw UsageError("dpgnn audit: confidence must be in (0, 1)");
  if (!(opt.canary_scale > 0.0) || !std::isfinite(opt.canary_scale))
    throw UsageError("dpgnn audit: the canary scale must be a finite number > 0");
  const fs::path out = opt.out_dir;
  const fs::path data_dir = out / "data";
  const std::string dataset_path = (data_dir / "dataset.h5").string();
  const std::string partition_path = cfg.data.partition.empty() ? "" : (data_dir / "partition.h5").string();
  const Canaries canaries = write_canary_dataset(cfg, opt, out, dataset_path, partition_path, comm);

  // ---- the ordinary training run on it ------------------------------------------------------
  const Config run_cfg = audited_config(cfg, dataset_path, partition_path);
  TrainOptions to;
  to.out_dir = (out / "run").string();
  to.progress = opt.progress;
  to.local_ranks = opt.local_ranks;
  AuditResult res;
  res.run = run_training(run_cfg, to, comms);
  res.is_private = run_is_private(run_cfg);
  res.accounted = is_private(cfg.method_enum());
  res.epsilon = res.run.epsilon;
  res.delta = cfg.privacy.delta;
  res.confidence = opt.confidence;
  res.canaries = opt.canaries;
  res.optimizer = run_cfg.train.optimizer;
  score_canaries(cfg, run_cfg, opt, out, dataset_path, canaries, comm, res);
  on_rank0(comm, [&] {
    const fs::path p = out / "audit.json";
    std::ofstream f(p);
    f << audit_json(res).dump(2) << "\n";
    if (!f.flush()) throw IoError(p.string() + ": cannot write");
  });
  // Every rank is done with data/ (the numbers above were broadcast after the scoring): the
  // scratch copy of the dataset goes, unless asked to stay. run/ stays: its ledger is the record.
  if (!opt.keep_data)
    on_rank0(comm, [&] {
      std::error_code ec;
      remove_tree(data_dir, ec);
      if (ec) spdlog::warn("audit: could not remove the scratch data {}: {}", data_dir.string(), ec.message());
    });
  return res;
}

}  // namespace dpgnn::train
