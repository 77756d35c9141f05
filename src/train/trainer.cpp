// The training loop (DESIGN.md "Shape of one training run"):
//   every rank: read its shard, sample its parts' disjoint subgraphs, agree on the global
//   subgraph ids; every step: the same uniform batch of m of the M ids everywhere (a pure
//   function of the broadcast batch secret and the step; secrets.h), clipped per-subgraph gradients of the ids this rank owns
//   summed into one flat buffer (rounded to the noise grid), rank 0 adds the discrete
//   Gaussian once (noise.h) and records the step in
//   the ledger (flushed) before anything uses it, ONE all-reduce of [gradient | loss |
//   count | stop], then the identical optimiser step on every rank.
// Stopping: rank 0 asks the accountant whether the NEXT step would exceed the target
// epsilon; the answer rides in this step's all-reduce, so no step over budget is ever taken.
// Resume: the accountant is rebuilt from the ledger; steps recorded after the last
// checkpoint are replayed with the same batch and the same noise (keyed by step), which
// releases nothing new, and training continues after them.
#include "dpgnn/train/trainer.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "batch_builder.h"
#include "checkpoint.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/dist/device.h"
#include "dpgnn/model/clipping.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/privacy/calibration.h"
#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/noise_convention.h"
#include "dpgnn/sampling/batch.h"
#include "dpgnn/sampling/global_ids.h"
#include "dpgnn/sampling/sampler.h"
#include "dpgnn/sampling/verify.h"
#include "dpgnn/train/ledger.h"
#include "dpgnn/train/noise.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/log.h"
#include "dpgnn/util/system.h"
#include "evaluator.h"
#include "feature_norm.h"
#include "methods/method.h"
#include "resume_guard.h"
#include "secrets.h"

namespace dpgnn::train {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// Fault injection for the resume tests: DPGNN_FAULT_EXIT_AFTER_STEP=t makes rank 0 die
// abruptly right after recording step t in the ledger, before the step is applied (the
// worst moment for the invariant "the ledger never holds fewer steps than were taken").
void crash_if_injected(std::int64_t step) {
  static const char* at = std::getenv("DPGNN_FAULT_EXIT_AFTER_STEP");
  if (at != nullptr && std::to_string(step) == at) std::_Exit(86);
}

// A check whose outcome is the same on every rank: rank 0 reports it, the others stay
// quiet, and the job shuts down cleanly (CollectiveError).
void ensure(bool ok, int rank, const std::string& message, int code = kExitUsage) {
  if (!ok) throw CollectiveError(message, code, rank == 0);
}

struct Sampled {
  std::vector<PartSamples> parts;
  sampling::GlobalIds ids{std::vector<std::int64_t>{0}};
};

// The subgraphs of `set` whose root (the part's local id) `drop` does not refuse, re-packed.
sampling::SubgraphSet without_roots(const sampling::SubgraphSet& set, const std::function<bool(std::int64_t)>& drop) {
  sampling::SubgraphSet out;
  out.loss_on_all_nodes = set.loss_on_all_nodes;
  for (std::int64_t i = 0; i < set.size(); ++i) {
    if (drop(set.roots[i])) continue;
    out.roots.push_back(set.roots[i]);
    out.nodes.insert(out.nodes.end(), set.nodes.begin() + set.node_ptr[i], set.nodes.begin() + set.node_ptr[i + 1]);
    out.node_ptr.push_back(static_cast<std::int64_t>(out.nodes.size()));
    out.edges.insert(out.edges.end(), set.edges.begin() + set.edge_ptr[i], set.edges.begin() + set.edge_ptr[i + 1]);
    out.edge_ptr.push_back(static_cast<std::int64_t>(out.edges.size()));
  }
  return out;
}

// Samples every owned part, verifies the invariants, and agrees on the global ids.
// `removed`: roots (global ids, sorted) whose subgraphs are dropped (a pre-training release
// folded those nodes into other examples). `in_sample`: when set, only roots whose training
// node index (the training nodes numbered 0..U-1 in id order) it accepts are kept (DPAR's
// hidden graph sample).
Sampled sample_all(const Config& cfg, const partition::Shard& shard, dist::Communicator& comm,
                   std::uint64_t epoch, const std::vector<std::int64_t>& part_train_nodes,
                   const std::vector<std::int64_t>& removed = {},
                   const std::function<bool(std::int64_t)>& in_sample = {}) {
  Sampled s;
  std::vector<std::int64_t> my_counts;
  for (const auto& pg : shard.training_graphs) {
    const auto opts = methods::method_spec(cfg.method_enum()).part_sampler_options(cfg, pg.part, part_train_nodes);
    const auto checks = sampling::checks_for(opts);
    PartSamples ps;
    ps.part = pg.part;
    ps.row_offset = pg.begin - shard.begin;
    const std::vector<std::uint8_t> mask(shard.train_mask.begin() + ps.row_offset,
                                         shard.train_mask.begin() + ps.row_offset + (pg.end - pg.begin));
    const sampling::SamplerKey key{cfg.train.seed, static_cast<std::uint64_t>(pg.part), epoch};
    ps.set = sampling::run_sampler(pg.graph, mask, opts, key);
    sampling::verify_subgraphs(pg.graph, mask, ps.set, checks,
                               std::string(sampling::to_string(opts.kind)) + " on part " + std::to_string(pg.part));
    if (!removed.empty() || in_sample) {
      // Training node index of each local row (only with a sample): the earlier parts'
      // training nodes, then the training rows before it in this part.
      std::vector<std::int64_t> index_of;
      if (in_sample) {
        std::int64_t first = 0;
        for (int p = 0; p < pg.part; ++p) first += part_train_nodes[static_cast<std::size_t>(p)];
        index_of.assign(mask.size(), -1);
        for (std::size_t v = 0; v < mask.size(); ++v)
          if (mask[v]) index_of[v] = first++;
      }
      ps.set = without_roots(ps.set, [&](std::int64_t v) {
        if (std::binary_search(removed.begin(), removed.end(), pg.begin + v)) return true;
        return in_sample && !in_sample(index_of[static_cast<std::size_t>(v)]);
      });
    }
    my_counts.push_back(ps.set.size());
    s.parts.push_back(std::move(ps));
  }
  // All parts' counts in part order (each rank owns a contiguous block of parts).
  std::vector<std::size_t> per_rank(comm.size());
  for (int q = 0; q < comm.size(); ++q) {
    const auto [a, b] = partition::parts_for_rank(q, comm.size(), shard.num_parts);
    per_rank[q] = static_cast<std::size_t>(b - a);
  }
  std::vector<std::int64_t> all_counts(static_cast<std::size_t>(shard.num_parts));
  comm.allgatherv(my_counts.data(), my_counts.size(), all_counts.data(), per_rank);
  s.ids = sampling::GlobalIds(all_counts);
  for (auto& ps : s.parts) ps.first_gid = s.ids.offset(ps.part);
  return s;
}

struct RunFiles {
  fs::path dir;
  fs::path config() const { return dir / "config.yaml"; }
  fs::path ledger() const { return dir / "ledger.jsonl"; }
  fs::path metrics() const { return dir / "metrics.jsonl"; }
  fs::path checkpoint() const { return dir / "checkpoint.h5"; }
  fs::path model() const { return dir / "model.h5"; }
  fs::path summary() const { return dir / "summary.json"; }
  fs::path run_info() const { return dir / "run.json"; }
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw IoError(p.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw IoError(tmp.string() + ": cannot write");
    out << text;
    if (!out.flush()) throw IoError(tmp.string() + ": cannot write");
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) throw IoError(p.string() + ": cannot write: " + ec.message());
}

// The first line where two resolved configs differ, for the resume refusal.
std::string first_difference(const std::string& a, const std::string& b) {
  std::stringstream sa(a), sb(b);
  std::string la, lb;
  while (true) {
    const bool ga = static_cast<bool>(std::getline(sa, la)), gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return "";
    if (la != lb || ga != gb) return "'" + la + "' in the run vs '" + lb + "' now";
  }
}

class MetricsWriter {
 public:
  explicit MetricsWriter(const fs::path& p) : out_(p, std::ios::app) {
    if (!out_) throw IoError(p.string() + ": cannot open for appending");
  }
  void write(const nlohmann::json& j) {
    out_ << j.dump() << "\n";
    out_.flush();
  }

 private:
  std::ofstream out_;
};

}  // namespace

TrainSummary run_training(const Config& cfg, const TrainOptions& opt, dist::Communicator& comm,
                          dist::Communicator* device_comm) {
  const auto t_start = Clock::now();
  const int rank = comm.rank(), world = comm.size();
  const Method method = cfg.method_enum();
  const bool priv = is_private(method);
  const methods::MethodSpec& spec = methods::method_spec(method);  // sampler, mechanism, checks
  const std::string config_text = dump_config(cfg);
  RunFiles files{opt.out_dir};

  // ---- run directory (rank 0 decides, everyone learns the outcome) -----------------------
  std::int64_t dir_status = 0;  // 0 ok, 1 not empty, 2 nothing to resume
  if (rank == 0 && !opt.dry_run) {
    if (opt.resume) {
      if (!fs::exists(files.config())) dir_status = 2;
    } else if (fs::exists(files.dir) && !fs::is_empty(files.dir) && !opt.force) {
      dir_status = 1;
    } else if (fs::exists(files.ledger())) {
      dir_status = 1;  // --force never overwrites spent privacy budget
    }
  }
  comm.broadcast(&dir_status, 1, 0);
  ensure(dir_status != 1, rank,
         files.dir.string() + ": run directory is not empty (use --resume to continue that run, or choose "
                              "another --out); an existing ledger is never overwritten");
  ensure(dir_status != 2, rank,
         files.dir.string() + ": nothing to resume (no config.yaml there); start the run without --resume");

  // ---- data ------------------------------------------------------------------------------
  const auto pf = partition::PartitionFile::open_or_single(cfg.data.partition, cfg.data.dataset);
  const auto partition_refusal = spec.refuse_partition(cfg, pf.method());
  ensure(!partition_refusal, rank, partition_refusal.value_or(""));
  ensure(world <= pf.num_parts(), rank,
         "there are " + std::to_string(world) + " ranks but the partition has only " +
             std::to_string(pf.num_parts()) + " part(s): every rank needs at least one part");
  partition::Shard shard = partition::load_shard(pf, rank, world);
  const auto& meta = shard.meta;
  normalize_feature_rows(shard.features.data(), shard.num_local(), meta.num_features, cfg.model.input_norm);
  ensure(meta.num_features > 0, rank,
         pf.path() + ": the dataset has no node features (num_features = 0); dpgnn trains on node features");

  // ---- compute set-up ---------------------------------------------------------------------
  const int threads = cfg.train.threads > 0 ? cfg.train.threads : default_threads_per_rank(opt.local_ranks);
  model::set_compute_threads(threads);
  if (rank == 0) report_blas();
  c10::Device device(c10::kCPU);
  if (cfg.device != "cpu") {
    ensure(torch::cuda::is_available(), rank,
           "device '" + cfg.device + "' requested but LibTorch sees no CUDA device (CPU-only LibTorch or no GPU)");
    const int pinned = cuda_device_index(cfg);
    // The same choice as the NCCL communicator's (make_communicator): one mapping of local rank to GPU.
    const int index = pinned >= 0 ? pinned
                                  : dist::cuda_device_for_local_rank(opt.local_rank,
                                                                     static_cast<int>(torch::cuda::device_count()));
    device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  if (device.is_cpu() && device_comm != nullptr)
    throw Error("run_training: a device communicator was given for device 'cpu'", kExitInternal);
  if (rank == 0)
    spdlog::info("device {}: gradients all-reduced over {}", device.str(),
                 device_comm != nullptr ? device_comm->backend() : comm.backend());

  // ---- subgraphs and the batch ----------------------------------------------------------
  const auto sample_start = Clock::now();
  std::uint64_t epoch = 0;
  Sampled sampled = sample_all(cfg, shard, comm, epoch, pf.part_train_nodes());
  std::int64_t M = sampled.ids.total();
  const double sample_secs = std::chrono::duration<double>(Clock::now() - sample_start).count();
  std::int64_t total_train = 0;
  for (auto c : pf.part_train_nodes()) total_train += c;
  auto population = [&](std::int64_t realised_m) { return spec.population(cfg, realised_m, total_train); };
  // Automatic batch: sized by the population the accountant uses (M_min with worst_case); a
  // pre-training release that folds examples away sizes it again below.
  std::int64_t m = cfg.train.batch_size > 0 ? cfg.train.batch_size : spec.auto_batch_size(population(M));
  ensure(M >= 1, rank, pf.path() + ": the sampler produced no subgraph (no training node?)");
  ensure(m <= M, rank,
         cfg.source + ": key 'train.batch_size': " + std::to_string(m) + " is larger than the number of subgraphs M = " +
             std::to_string(M) + " (uniform sampling without replacement needs m <= M)");
  if (rank == 0)
    spdlog::info("{}: {} subgraphs over {} part(s) in {:.2f} s; batch {} (q = {:.4g})", method_name(method), M,
                 shard.num_parts, sample_secs, m, static_cast<double>(m) / static_cast<double>(M));
  if (rank == 0 && method == Method::kDpGnn && cfg.sampler.degree_bound == "paper")
    spdlog::warn("dpgnn: sampler.degree_bound: paper samples each in-edge of u with probability K/(2|RE_u|), which "
                 "depends on u's other in-neighbours: removing a node changes subgraphs that do not contain it, and "
                 "Lemma 2 (hence the reported epsilon) does not cover this sampling step (docs/privacy.md, DP-GNN "
                 "degree bounding); sampler.degree_bound: require is covered");

  // ---- privacy: mechanism, noise ------------------------------------------------------------
  // A method's pre-training release (DPAR's DP-APPR): its scale is calibrated so that it alone
  // spends pre_release_fraction of the target; the steps are then calibrated after it. The
  // occurrence bound g is known only once the release is made (after the secrets): until
  // then the steps are calibrated with g = 1, and recalibrated with the real g below.
  const bool has_release = priv && spec.has_pre_release();
  std::int64_t occurrence = 1;
  double release_z = 0.0;
  std::vector<privacy::AccountantEvent> release_events;
  auto mechanism_for = [&](std::int64_t realised_m, double z) {
    return spec.mechanism(cfg, realised_m, total_train, m, z, occurrence);
  };
  const privacy::Conversion conversion =
      cfg.privacy.conversion == "mironov" ? privacy::Conversion::kMironov : privacy::Conversion::kBalle;
  // The whole run on a hidden sample of the privacy units (DPAR's graph sampling): every
  // epsilon, calibrated or reported, is the amplified one (privacy/subsample.h).
  const std::optional<privacy::Subsample> outer_subsample =
      priv ? spec.outer_subsample(cfg, total_train) : std::nullopt;
  auto calibrate_steps_noise = [&]() {
    if (cfg.privacy.noise_multiplier) return *cfg.privacy.noise_multiplier;
    privacy::CalibrationOptions co;
    co.conversion = conversion;
    co.subsample = outer_subsample;
    if (!release_events.empty()) co.prior_rdp = privacy::events_rdp(release_events, privacy::default_orders());
    try {
      return privacy::calibrate_noise_multiplier(mechanism_for(M, 1.0), cfg.train.max_steps,
                                                 cfg.privacy.target_epsilon, cfg.privacy.delta, co)
          .noise_multiplier;
    } catch (const std::invalid_argument& e) {
      ensure(false, rank, cfg.source + ": cannot calibrate privacy.noise_multiplier: " + e.what());
    }
    return 0.0;
  };
  double z = 0.0;
  if (priv) {
    ensure(m <= population(M), rank,
           cfg.source + ": key 'train.batch_size' (" + std::to_string(m) + ") exceeds the worst-case population M_min = " +
               std::to_string(population(M)));
    const auto privacy_refusal = spec.check_privacy(cfg, M);
    ensure(!privacy_refusal, rank, privacy_refusal.value_or(""));
    if (has_release) {
      privacy::CalibrationOptions co;
      co.conversion = conversion;
      co.subsample = outer_subsample;
      try {
        release_z = privacy::calibrate_events([&](double s) { return spec.pre_release_events(cfg, s); },
                                              spec.pre_release_fraction(cfg) * cfg.privacy.target_epsilon,
                                              cfg.privacy.delta, co)
                        .noise_multiplier;
      } catch (const std::invalid_argument& e) {
        ensure(false, rank, cfg.source + ": cannot calibrate the pre-training release: " + e.what());
      }
      release_events = spec.pre_release_events(cfg, release_z);
    }
    z = calibrate_steps_noise();
  }
  privacy::Mechanism mech = priv ? mechanism_for(M, z) : privacy::Mechanism::gaussian(1.0);
  const double clip = cfg.privacy.clip_norm;
  double sigma = priv ? privacy::noise_std(mech, clip) : 0.0;
  if (rank == 0 && priv)
    spdlog::info("privacy: {} accountant, population {}, noise multiplier {:.4g} (sigma = {:.4g} for clip {}), "
                 "target epsilon {} at delta {}{}",
                 accountant_name(method, cfg.privacy.worst_case), mech.dataset_size, z, sigma, clip,
                 cfg.privacy.target_epsilon, cfg.privacy.delta,
                 has_release ? fmt::format(" (provisional: g = 1 until the release; release scale {:.4g})", release_z)
                             : "");
  if (opt.dry_run) {
    TrainSummary s;
    s.method = method_name(method);
    s.noise_multiplier = z;
    s.sigma = sigma;
    s.batch_size = m;
    s.subgraphs = priv ? mech.dataset_size : M;
    s.ranks = world;
    s.accountant = accountant_name(method, cfg.privacy.worst_case);
    return s;
  }

  // ---- model, optimiser, evaluator --------------------------------------------------------
  model::Gnn net(methods::model_config(cfg, meta), cfg.train.seed, device);
  model::OptimizerConfig oc;
  oc.type = model::parse_optimizer(cfg.train.optimizer);
  oc.lr = cfg.train.lr;
  oc.momentum = cfg.train.momentum;
  oc.weight_decay = cfg.train.weight_decay;
  oc.validate();
  auto optimizer = model::make_optimizer(oc, net.num_parameters(), device);
  // per-layer: C_l = C / sqrt(L), so one example's clipped gradient still has norm <= C and
  // sigma above (sensitivity from C) is unchanged (model/clipping.h).
  const model::ClipConfig clip_cfg = cfg.privacy.clipping == "per-layer"
                                         ? model::ClipConfig::per_layer_equal(clip, net.num_layers())
                                         : model::ClipConfig::flat(clip);
  Evaluator evaluator(shard, comm, device, device_comm);
  const std::int64_t P = net.num_parameters();
  // The discrete Gaussian's grid (noise.h) for the current sigma, z and batch, checked before
  // anything is written; made again whenever they change.
  NoiseGrid noise_grid;
  auto make_checked_grid = [&]() {
    try {
      // With a hidden sample, exchanging a sampled node for another can move its example to
      // another rank: two ranks' roundings to the grid change (noise.h).
      noise_grid = make_noise_grid(sigma, sigma / z, P, outer_subsample ? 2 : 1);
      check_exact_grid_sum(noise_grid, clip, m);
    } catch (const UsageError& e) {
      ensure(false, rank, cfg.source + ": " + e.what());
    }
  };
  if (priv) {
    make_checked_grid();
    if (rank == 0)
      spdlog::info("noise: exact discrete Gaussian on a grid of {:.3g} (std {:.6g}, {:.3g} above sigma for the "
                   "rounding to the grid)",
                   noise_grid.gamma, noise_grid.sigma_effective, noise_grid.sigma_effective / sigma - 1.0);
  }

  // ---- run directory, resume ------------------------------------------------------------------
  std::int64_t start_step = 0;     // first step to compute
  std::int64_t ledger_steps = 0;   // steps already in the ledger (replayed, not re-recorded)
  std::int64_t ledger_releases = 0;  // pre-training release lines already in the ledger
  RunSecrets secrets;
  std::optional<privacy::Accountant> accountant;
  std::unique_ptr<LedgerWriter> ledger;
  std::unique_ptr<MetricsWriter> metrics;
  if (rank == 0) {
    fs::create_directories(files.dir);
    if (opt.resume) {
      const std::string before = read_text(files.config());
      const std::string diff = first_difference(before, config_text);
      if (!diff.empty())
        throw UsageError(files.config().string() + ": refusing to resume with a different config (" + diff + ")");
      const auto info = nlohmann::json::parse(read_text(files.run_info()));
      if (info.at("dataset_checksum").get<std::string>() != pf.dataset_checksum() ||
          info.at("partition_checksum").get<std::string>() != pf.meta().checksum)
        throw UsageError(files.run_info().string() +
                         ": refusing to resume on a different dataset or partition (checksums differ)");
      if (fs::exists(files.checkpoint())) {
        const CheckpointMeta cm = read_checkpoint_meta(files.checkpoint().string());
        start_step = cm.step;
      }
      if (priv) {
        const auto entries = fs::exists(files.ledger()) ? read_ledger(files.ledger().string()) : std::vector<LedgerEntry>{};
        ledger_steps = sgd_steps(entries);
        ledger_releases = static_cast<std::int64_t>(entries.size()) - ledger_steps;
        // Before anything here is written: never spend the budget twice (resume_guard.h).
        const std::string refusal = resume_refusal(
            {fs::exists(files.ledger()), ledger_steps, fs::exists(files.checkpoint()), start_step,
             secrets_available(files.dir, cfg.privacy.noise_seed.has_value()), training_evidence(files.dir.string())});
        if (!refusal.empty()) throw UsageError(files.dir.string() + ": refusing to resume: " + refusal);
        accountant = accountant_from_ledger(entries, conversion);
        if (outer_subsample) accountant->set_subsample(*outer_subsample);
      }
    } else {
      write_text(files.config(), config_text);
      nlohmann::json info = {{"dataset_checksum", pf.dataset_checksum()},
                             {"partition_checksum", pf.meta().checksum},
                             {"ranks", world},
                             {"noise_seed_pinned", cfg.privacy.noise_seed.has_value()}};
      write_text(files.run_info(), info.dump(2) + "\n");
      if (priv) {
        accountant.emplace(std::vector<double>{}, conversion);
        if (outer_subsample) accountant->set_subsample(*outer_subsample);
      }
    }
    secrets = rank0_secrets(priv, cfg.privacy.noise_seed, cfg.train.seed, files.dir, opt.resume);
    if (priv) ledger = std::make_unique<LedgerWriter>(files.ledger().string());
    if (cfg.train.log_train_loss && priv)
      spdlog::warn("train.log_train_loss: the training loss is computed on private labels without noise and is "
                   "released outside the privacy guarantee: this run is NOT private (private: false)");
    metrics = std::make_unique<MetricsWriter>(files.metrics());
  }
  std::int64_t resume_state[2] = {start_step, ledger_steps};
  comm.broadcast(resume_state, 2, 0);
  start_step = resume_state[0];
  ledger_steps = resume_state[1];
  share_batch_secret(secrets, comm);

  // ---- a method's pre-training release (DPAR's DP-APPR), then the steps' final noise --------
  methods::PreRelease release;
  if (has_release) {
    // Deterministic in (batch secret, data): a resumed run recomputes exactly what was released.
    release = spec.pre_release(cfg, pf, shard, comm, secrets.batch, release_z);
    occurrence = release.occurrence_bound;
    if (!release.removed_examples.empty() || release.in_sample) {
      sampled = sample_all(cfg, shard, comm, epoch, pf.part_train_nodes(), release.removed_examples,
                           release.in_sample);
      M = sampled.ids.total();
      if (cfg.train.batch_size == 0) m = spec.auto_batch_size(population(M));
      ensure(m <= M, rank,
             cfg.source + ": key 'train.batch_size' (" + std::to_string(m) + ") exceeds the " + std::to_string(M) +
                 " examples left after the release");
    }
    z = calibrate_steps_noise();
    mech = mechanism_for(M, z);
    sigma = privacy::noise_std(mech, clip);
    make_checked_grid();
    if (rank == 0) {
      spdlog::info("{}", release.summary);
      spdlog::info("privacy: steps recalibrated after the release: {} (sigma = {:.4g})", mech.to_string(), sigma);
      if (ledger_releases == 0) {
        // Recorded (fsync) before anything uses the release; a resumed run finds it there.
        if (outer_subsample) {
          LedgerEntry line;
          line.release = kGraphSampleRelease;
          line.subsample = outer_subsample;
          ledger->append(line);
        }
        for (const auto& e : release_events) {
          accountant->step(e.mechanism, e.count);
          LedgerEntry line;
          line.release = release.name;
          line.mechanism = e.mechanism;
          line.count = e.count;
          line.epsilon = accountant->epsilon(cfg.privacy.delta).epsilon;
          ledger->append(line);
        }
      }
      spdlog::info("privacy: the release spent epsilon {:.4f} of {}", accountant->epsilon(cfg.privacy.delta).epsilon,
                   cfg.privacy.target_epsilon);
    }
  }
  if (const int steps = spec.propagation_steps(cfg); steps > 0) evaluator.set_propagation(steps, cfg.dpar.alpha);
  // Whether the run's releases are covered by the guarantee (summary.json "private").
  const bool run_is_private = priv && !cfg.privacy.noise_seed && !cfg.train.log_train_loss;
  const bool release_loss = !priv || cfg.train.log_train_loss;
  // Parameter average for evaluation (Polyak-Ruppert / EMA; post-processing of the released
  // noisy iterates, so it costs no privacy).
  at::Tensor ema;
  if (cfg.train.ema > 0) ema = net.flatten().clone();
  if (start_step > 0) {
    // Rank 0 reads the checkpoint and broadcasts it: ranks need no shared file system.
    if (rank == 0) load_checkpoint_state(files.checkpoint().string(), net, *optimizer, ema.defined() ? &ema : nullptr);
    if (ema.defined()) {
      at::Tensor e = ema.to(torch::kCPU).contiguous();
      comm.broadcast(e.data_ptr<float>(), static_cast<std::size_t>(P), 0);
      ema = e.to(device);
    }
    at::Tensor flat = net.flatten().to(torch::kCPU).contiguous();
    comm.broadcast(flat.data_ptr<float>(), static_cast<std::size_t>(P), 0);
    net.unflatten(flat.to(device));
    model::NamedTensors st = optimizer->state();
    for (auto& [name, t] : st) {
      at::Tensor c = t.to(torch::kCPU).contiguous();
      if (c.scalar_type() == torch::kInt64)
        comm.broadcast(c.data_ptr<std::int64_t>(), static_cast<std::size_t>(c.numel()), 0);
      else {
        c = c.to(torch::kFloat64).contiguous();
        comm.broadcast(c.data_ptr<double>(), static_cast<std::size_t>(c.numel()), 0);
      }
      t = c.to(t.device(), t.scalar_type());
    }
    optimizer->load_state(st);
    if (rank == 0) spdlog::info("resuming after step {} ({} steps in the ledger)", start_step, ledger_steps);
  }

  // ---- re-sampling (DRW-D): the subgraph set of the epoch holding step t --------------------------------
  const bool full_auto_batch = cfg.train.batch_size == 0 && m == population(M);
  auto resample_if_needed = [&](std::int64_t t) {
    const std::uint64_t e = spec.epoch_of_step(cfg, t);
    if (e == epoch) return;
    epoch = e;
    sampled = sample_all(cfg, shard, comm, epoch, pf.part_train_nodes(), release.removed_examples,
                         release.in_sample);
    M = sampled.ids.total();
    // An automatic full batch follows the epoch's M (each step is then the plain Gaussian
    // mechanism whatever M is, so the calibration still holds); any other batch stays as it is.
    if (full_auto_batch) m = population(M);
    ensure(m <= M, rank,
           "drw-d re-sampling (epoch " + std::to_string(epoch) + ") produced M = " + std::to_string(M) +
               " subgraphs, fewer than train.batch_size = " + std::to_string(m));
    if (priv) make_checked_grid();  // the same sigma and z: the same grid, checked for the new batch
    mech = mechanism_for(M, z);
  };
  resample_if_needed(start_step);

  // ---- may the first step run at all? -------------------------------------------------------
  std::int64_t stop_now = 0;
  if (rank == 0 && priv && start_step >= ledger_steps &&
      accountant->would_exceed(cfg.privacy.target_epsilon, cfg.privacy.delta, mech))
    stop_now = 1;
  if (start_step >= cfg.train.max_steps) stop_now = 1;
  comm.broadcast(&stop_now, 1, 0);

  // ---- the loop ------------------------------------------------------------------------------
  // [gradient | loss | count | stop] in float64: a private run's gradient travels as integers
  // on the noise grid (train/noise.h), which a float64 all-reduce sums exactly.
  at::Tensor buffer = torch::zeros({P + 3}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
  at::Tensor grad = torch::zeros({P}, torch::TensorOptions().dtype(net.dtype()).device(device));
  std::int64_t step = start_step;
  std::int64_t steps_this_run = 0;
  const auto loop_start = Clock::now();
  auto last_progress = loop_start;
  EvalResult last_eval;
  double last_loss = 0.0;
  auto epsilon_now = [&]() { return priv && rank == 0 ? accountant->epsilon(cfg.privacy.delta).epsilon : 0.0; };
  auto write_checkpoint_now = [&](std::int64_t completed) {
    if (rank != 0) return;
    CheckpointMeta cm{completed, world, config_text, pf.dataset_checksum(), pf.meta().checksum};
    write_checkpoint(files.checkpoint().string(), cm, net, *optimizer, ema);
  };
  // Runs fn with the averaged parameters in the model (when the average is on).
  auto with_average = [&](const auto& fn) {
    if (!ema.defined()) return fn();
    const at::Tensor current = net.flatten();
    net.unflatten(ema);
    fn();
    net.unflatten(current);
  };
  auto run_eval = [&](std::int64_t completed) {
    const auto eval_start = Clock::now();
    with_average([&] { last_eval = evaluator.evaluate(net); });
    const double eval_secs = std::chrono::duration<double>(Clock::now() - eval_start).count();
    if (rank == 0) {
      const std::string key = meta.multilabel ? "f1_micro" : "accuracy";
      metrics->write({{"step", completed}, {"val_" + key, last_eval.val}, {"test_" + key, last_eval.test},
                      {"epsilon", epsilon_now()}});
      spdlog::info("step {}: val {} {:.4f}, test {} {:.4f}{} (evaluation {:.2f} s)", completed, key, last_eval.val, key,
                   last_eval.test, priv ? fmt::format(", epsilon {:.4f}", epsilon_now()) : "", eval_secs);
    }
  };

  while (!stop_now) {
    const bool replay = step < ledger_steps;  // recorded before a crash: same batch, same noise
    const auto gids = sampling::sample_batch_without_replacement(secrets.batch, static_cast<std::uint64_t>(step), M, m);
    std::vector<Pick> picks;
    for (auto gid : gids) {
      const auto part = sampled.ids.owner(gid);
      if (part < shard.first_part || part >= shard.last_part) continue;
      picks.push_back({static_cast<std::size_t>(part - shard.first_part), sampled.ids.local_index(gid), gid});
    }
    grad.zero_();
    const model::DropoutKey dkey{cfg.train.seed, step};
    double loss_sum = 0.0;
    if (!picks.empty()) {
      const model::Batch batch = build_batch(picks, sampled.parts, shard, device, &release.example_features);
      if (priv)
        loss_sum = model::clipped_gradient_sum(net, batch, clip_cfg, dkey, grad).loss_sum;
      else
        loss_sum = model::gradient_sum(net, batch, dkey, grad);
    }
    std::int64_t stop_flag = 0;
    if (rank == 0) {
      if (priv) {
        if (!replay) {
          accountant->step(mech);
          LedgerEntry line;
          line.step = step;
          line.mechanism = mech;
          line.epsilon = accountant->epsilon(cfg.privacy.delta).epsilon;
          ledger->append(line);  // durable before use
          crash_if_injected(step);
        }
      }
      if (step + 1 >= cfg.train.max_steps) stop_flag = 1;
    }
    at::Tensor grid_sum = buffer.narrow(0, 0, P);
    if (priv) {
      grid_sum.copy_(grad.to(torch::kFloat64).div_(noise_grid.gamma).round_());  // this rank's k_r
      if (rank == 0) {
        at::Tensor host = grid_sum.to(torch::kCPU).contiguous();
        add_discrete_gaussian_noise(host.data_ptr<double>(), static_cast<std::size_t>(P), noise_grid.variance,
                                    secrets.noise, static_cast<std::uint64_t>(step));
        grid_sum.copy_(host);
      }
    } else {
      grid_sum.copy_(grad);
    }
    // DRW-D: the next step's subgraph set is needed to decide whether it fits the budget.
    resample_if_needed(step + 1);
    if (rank == 0 && priv && !stop_flag && step + 1 >= ledger_steps &&
        accountant->would_exceed(cfg.privacy.target_epsilon, cfg.privacy.delta, mech))
      stop_flag = 1;
    buffer[P] = loss_sum;
    buffer[P + 1] = static_cast<double>(picks.size());
    buffer[P + 2] = static_cast<double>(stop_flag);
    if (buffer.device().is_cpu()) {
      comm.allreduce_sum(buffer.data_ptr<double>(), static_cast<std::size_t>(P + 3));
    } else if (device_comm != nullptr) {  // NCCL: the buffer never leaves the GPU
      device_comm->allreduce_sum(buffer.data_ptr<double>(), static_cast<std::size_t>(P + 3));
    } else {
      at::Tensor host = buffer.to(torch::kCPU).contiguous();
      comm.allreduce_sum(host.data_ptr<double>(), static_cast<std::size_t>(P + 3));
      buffer.copy_(host);
    }
    // The released noisy sum is the integer vector; the gradient is its post-processing.
    const at::Tensor noisy = priv ? buffer.narrow(0, 0, P) * noise_grid.gamma : buffer.narrow(0, 0, P);
    optimizer->step(net.flat_parameters(), noisy.to(net.dtype()), m);
    if (ema.defined()) {
      torch::NoGradGuard no_grad;
      ema.mul_(cfg.train.ema).add_(net.flat_parameters(), 1.0 - cfg.train.ema);
    }
    const at::Tensor tail = buffer.narrow(0, P, 3).to(torch::kCPU);
    last_loss = tail[0].item<double>() / std::max(1.0, tail[1].item<double>());
    stop_now = tail[2].item<double>() > 0.5 ? 1 : 0;
    ++step;
    ++steps_this_run;

    if (rank == 0) {
      const double secs = std::chrono::duration<double>(Clock::now() - loop_start).count();
      const double rate = secs > 0 ? static_cast<double>(steps_this_run) / secs : 0.0;
      nlohmann::json line = {{"step", step}, {"steps_per_second", rate}};
      if (release_loss) line["loss"] = last_loss;  // private labels, no noise: off by default
      if (priv) line["epsilon"] = epsilon_now();
      metrics->write(line);
      const auto now = Clock::now();
      if (opt.progress && progress_enabled() && std::chrono::duration<double>(now - last_progress).count() > 2.0) {
        last_progress = now;
        const double eta = rate > 0 ? static_cast<double>(cfg.train.max_steps - step) / rate : 0.0;
        spdlog::info("step {}/{}{}{} {:.2f} steps/s ETA {:.0f} s", step, cfg.train.max_steps,
                     release_loss ? fmt::format(" loss {:.4f}", last_loss) : "",
                     priv ? fmt::format(" epsilon {:.3f}/{}", epsilon_now(), cfg.privacy.target_epsilon) : "", rate,
                     eta);
      }
    }
    if (cfg.train.eval_every > 0 && step % cfg.train.eval_every == 0 && !stop_now) run_eval(step);
    if (cfg.train.checkpoint_every > 0 && step % cfg.train.checkpoint_every == 0 && !stop_now)
      write_checkpoint_now(step);
  }
  const double loop_secs = std::chrono::duration<double>(Clock::now() - loop_start).count();

  // ---- the end: evaluate, save, summarise ----------------------------------------------------
  run_eval(step);
  write_checkpoint_now(step);
  TrainSummary s;
  s.method = method_name(method);
  s.delta = cfg.privacy.delta;
  s.target_epsilon = cfg.privacy.target_epsilon;
  s.noise_multiplier = z;
  s.sigma = sigma;
  s.steps = step;
  s.ranks = world;
  s.batch_size = m;
  s.subgraphs = priv ? mech.dataset_size : M;
  s.accountant = accountant_name(method, cfg.privacy.worst_case);
  s.multilabel = meta.multilabel;
  s.val_metric = last_eval.val;
  s.test_metric = last_eval.test;
  s.wall_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  s.steps_per_second = loop_secs > 0 ? static_cast<double>(steps_this_run) / loop_secs : 0.0;
  if (rank == 0) {
    double order = 0.0;
    if (priv) {
      const auto e = accountant->epsilon(cfg.privacy.delta);
      s.epsilon = e.epsilon;
      order = e.order;
    }
    with_average([&] { write_model_file(files.model().string(), net, config_text); });
    const std::string key = meta.multilabel ? "f1_micro" : "accuracy";
    nlohmann::json j = {{"method", s.method},
                        {"epsilon", s.epsilon},
                        {"delta", s.delta},
                        {"target_epsilon", s.target_epsilon},
                        {"noise_multiplier", s.noise_multiplier},
                        {"sigma", s.sigma},
                        {"clip_norm", clip},
                        {"order", order},
                        {"conversion", cfg.privacy.conversion},
                        {"steps", s.steps},
                        {"ranks", s.ranks},
                        {"batch_size", s.batch_size},
                        {"subgraphs", s.subgraphs},
                        {"sampling_rate", static_cast<double>(m) / static_cast<double>(std::max<std::int64_t>(1, s.subgraphs))},
                        {"accountant", s.accountant},
                        {"test_" + key, s.test_metric},
                        {"val_" + key, s.val_metric},
                        {"wall_seconds", s.wall_seconds},
                        {"steps_per_second", s.steps_per_second},
                        {"dataset", cfg.data.dataset},
                        {"partition", cfg.data.partition},
                        {"seed", cfg.train.seed},
                        {"noise_seed_pinned", cfg.privacy.noise_seed.has_value()},
                        {"private", run_is_private},
                        {"train_loss_released", release_loss}};
    if (!priv) j["epsilon"] = nullptr;
    if (has_release) {
      nlohmann::json events = nlohmann::json::array();
      for (const auto& e : release_events) events.push_back(privacy::Accountant::event_line(e.mechanism, e.count));
      j["release"] = {{"name", release.name}, {"events", events}, {"scale", release_z},
                      {"fraction_of_target", spec.pre_release_fraction(cfg)}};
      j["occurrence_bound"] = occurrence;
      if (outer_subsample) j["graph_sample"] = {{"training_nodes", outer_subsample->population},
                                                {"sampled", outer_subsample->sample},
                                                {"rate", outer_subsample->rate()}};
    }
    if (priv) j["noise_std_effective"] = noise_grid.sigma_effective;
    write_text(files.summary(), j.dump(2) + "\n");
    if (priv) remove_secret_files(files.dir);  // nothing left to replay
    spdlog::info("done: {} steps, test {} {:.4f}{}, private: {}, {:.1f} s ({:.2f} steps/s); results in {}", s.steps,
                 key, s.test_metric, priv ? fmt::format(", epsilon {:.4f} (delta {})", s.epsilon, s.delta) : "",
                 run_is_private ? "true" : "false", s.wall_seconds, s.steps_per_second, files.dir.string());
  }
  comm.broadcast(&s.epsilon, 1, 0);
  return s;
}

}  // namespace dpgnn::train
