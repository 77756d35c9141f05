// One training run, in the stages of DESIGN.md's "Shape of one training run":
//   run directory -> data (this rank's shard) -> subgraphs and the batch (SubgraphEpochs) ->
//   privacy plan (calibration, mechanism) -> model -> the bound run directory (create or
//   resume: RunDirectory) -> the pre-training release, write-ahead (PrivacyPlan) -> the steps
//   (run_steps) -> the end (run_summary.h).
// Each stage lives in its own file with its own state; this file only wires them together.
#include "dpgnn/train/trainer.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <optional>

#include "checkpoint.h"
#include "collective_text.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/dist/collectives.h"
#include "dpgnn/model/clipping.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/util/collective.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/system.h"
#include "dpgnn/util/version.h"
#include "evaluator.h"
#include "feature_norm.h"
#include "methods/method.h"
#include "privacy_plan.h"
#include "resume_guard.h"
#include "run_directory.h"
#include "run_summary.h"
#include "feature_store.h"
#include "step_loop.h"
#include "subgraph_epochs.h"

namespace dpgnn::train {
namespace fs = std::filesystem;

namespace {

// A check whose outcome is the same on every rank: rank 0 reports it, the others stay
// quiet, and the job shuts down cleanly (CollectiveError).
void ensure(bool ok, int rank, const std::string& message, int code = kExitUsage) {
  if (!ok) throw CollectiveError(message, code, rank == 0);
}

// Runs `fn` on every rank (util/collective.h): an error every rank meets ends the job cleanly.
template <class Fn>
void on_every_rank(dist::Communicator& comm, Fn&& fn) {
  dpgnn::on_every_rank(
      comm.rank(), comm.size(),
      [&](std::int64_t failed) {
        comm.allreduce_sum(&failed, 1);
        return failed;
      },
      std::forward<Fn>(fn));
}

// Collective: may this run use its directory? (rank 0 decides, everyone learns the outcome)
void check_directory(const RunPaths& files, const TrainOptions& opt, dist::Communicator& comm) {
  std::int64_t status = 0;  // 0 ok, 1 not empty, 2 spent budget without its ledger
  std::string why;
  if (comm.rank() == 0 && !opt.dry_run && !opt.resume) {
    if (fs::exists(files.dir) && !fs::is_empty(files.dir) && !opt.force) status = 1;
    if (fs::exists(files.ledger())) status = 1;  // --force never overwrites spent privacy budget
    if (status == 0 && fs::exists(files.dir)) {
      why = overwrite_refusal(files.dir.string());  // nor draws again what a lost ledger counted
      if (!why.empty()) status = 2;
    }
  }
  comm.broadcast(&status, 1, 0);
  ensure(status != 2, comm.rank(), why);
  ensure(status == 0, comm.rank(),
         files.dir.string() + ": run directory is not empty (use --resume to continue that run, or choose another "
                              "--out); an existing ledger is never overwritten");
}

// The rank's device: the GPU the command's Collectives bound (DESIGN.md 9), or the CPU.
c10::Device pick_device(const Config& cfg, int rank, const dist::Collectives& comms) {
  if (cfg.device == "cpu") {
    if (comms.cuda_device() >= 0)
      throw Error("run_training: the collectives were opened on a GPU for device 'cpu'", kExitInternal);
    return c10::Device(c10::kCPU);
  }
  ensure(torch::cuda::is_available(), rank,
         "device '" + cfg.device + "' requested but LibTorch sees no CUDA device (CPU-only LibTorch or no GPU)");
  if (comms.cuda_device() < 0)
    throw Error("run_training: device '" + cfg.device + "' but the collectives were opened without a GPU",
                kExitInternal);
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(comms.cuda_device()));
}

// Collective: creates or resumes the bound run directory at rank 0 (every refusal before
// anything is written) and shares the outcome.
RunStart open_run_directory(RunDirectory& dir, const TrainOptions& opt, const ThisStart& now,
                            const nlohmann::json& provenance, dist::Communicator& comm) {
  RunStart start;
  std::int64_t failed = 0;
  std::string message;
  if (comm.rank() == 0) {
    try {
      start = opt.resume ? dir.resume(now, provenance) : dir.create(now, provenance);
    } catch (const Error& e) {
      failed = e.exit_code();
      message = e.what();
    }
  }
  comm.broadcast(&failed, 1, 0);
  broadcast_text(message, comm);
  if (failed != 0) throw CollectiveError(message, static_cast<int>(failed), comm.rank() == 0);
  std::int64_t state[3] = {start.finished ? 1 : 0, start.start_step, start.ledger_steps};
  comm.broadcast(state, 3, 0);
  start.finished = state[0] != 0;
  start.start_step = state[1];
  start.ledger_steps = state[2];
  return start;
}

// The model a release made (DPAR's class sums): its parameters, and the average's start.
void set_release_weights(ModelState& state, const std::vector<float>& weights) {
  if (static_cast<std::int64_t>(weights.size()) != state.net.num_parameters())
    throw Error("the release's weights have " + std::to_string(weights.size()) + " values, the model " +
                    std::to_string(state.net.num_parameters()),
                kExitInternal);
  torch::NoGradGuard no_grad;
  const at::Tensor flat =
      torch::from_blob(const_cast<float*>(weights.data()), {static_cast<std::int64_t>(weights.size())}, torch::kFloat32)
          .to(state.net.device(), state.net.dtype());
  state.net.unflatten(flat);
  if (state.ema.defined()) state.ema.copy_(state.net.flat_parameters());
}

}  // namespace

TrainSummary run_training(const Config& requested, const TrainOptions& opt, const dist::Collectives& comms) {
  const auto t_start = std::chrono::steady_clock::now();
  // The config the run uses: the requested one until the data is known, then with the method's
  // public choices resolved (MethodSpec::resolved; DPAR's dpar.learner auto).
  Config run_config = requested;
  const Config& cfg = run_config;
  dist::Communicator& comm = comms.host();  // the stages below move host buffers only
  const int rank = comm.rank(), world = comm.size();
  const methods::MethodSpec& spec = methods::method_spec(cfg.method_enum());
  RunDirectory dir(opt.out_dir);
  check_directory(dir.paths(), opt, comm);

  // ---- data: this rank's shard -------------------------------------------------------------
  std::optional<partition::PartitionFile> pf_opened;
  on_every_rank(comm, [&] { pf_opened.emplace(partition::PartitionFile::open_or_single(cfg.data.partition, cfg.data.dataset)); });
  const partition::PartitionFile& pf = *pf_opened;
  const auto partition_refusal = spec.refuse_partition(cfg, pf.method());
  ensure(!partition_refusal, rank, partition_refusal.value_or(""));
  ensure(world <= pf.num_parts(), rank,
         cfg.data.partition.empty()
             ? cfg.source + ": key 'data.partition' is not set, so the dataset is one part for one rank, but there are " +
                   std::to_string(world) + " ranks; make a partition with `dpgnn partition --dataset " +
                   cfg.data.dataset + " --parts " + std::to_string(world) + " --out PART.h5` and set data.partition"
             : "there are " + std::to_string(world) + " ranks but the partition has only " +
                   std::to_string(pf.num_parts()) + " part(s): every rank needs at least one part");
  std::optional<partition::Shard> shard_loaded;
  on_every_rank(comm, [&] { shard_loaded.emplace(partition::load_shard(pf, rank, world)); });
  partition::Shard& shard = *shard_loaded;
  const auto& meta = shard.meta;
  ensure(meta.num_features > 0, rank,
         pf.path() + ": the dataset has no node features (num_features = 0); dpgnn trains on node features");
  normalize_feature_rows(shard.features.data(), shard.num_local(), meta.num_features, cfg.model.input_norm);
  {
    std::int64_t total_train = 0;
    for (auto n : pf.part_train_nodes()) total_train += n;
    run_config = spec.resolved(requested, meta, total_train);
    if (rank == 0 && requested.dpar.learner != cfg.dpar.learner)
      spdlog::info("dpar.learner auto: {} ({} training nodes x epsilon {}; class_sums below {}, with 3 or more classes)",
                   cfg.dpar.learner, total_train, cfg.privacy.target_epsilon, cfg.dpar.class_sums_below);
  }

  // ---- compute set-up ------------------------------------------------------------------------
  const int threads = cfg.train.threads > 0 ? cfg.train.threads : default_threads_per_rank(opt.local_ranks);
  model::set_compute_threads(threads);
  if (rank == 0) report_blas(threads);
  const c10::Device device = pick_device(cfg, rank, comms);
  if (rank == 0)
    spdlog::info("device {}: gradients all-reduced over {}", device.str(),
                 device.is_cpu() ? comm.backend() : comms.device_backend());

  // ---- subgraphs, the batch, the privacy plan -------------------------------------------------
  SubgraphEpochs epochs(cfg, spec, shard, pf, comm);
  if (rank == 0)
    spdlog::info("{}: {} subgraphs over {} part(s) in {:.2f} s; batch {} (q = {:.4g})", cfg.method, epochs.M(),
                 shard.num_parts, epochs.sample_seconds(), epochs.m(),
                 static_cast<double>(epochs.m()) / static_cast<double>(epochs.M()));
  if (rank == 0 && spec.is_private())
    for (const auto& why : reasons_not_private(cfg))
      spdlog::warn("this run is NOT private (summary.json private: false): {}", why);
  PrivacyPlan plan(cfg, spec, meta, rank);
  plan.calibrate(epochs);
  if (rank == 0 && plan.is_private()) spdlog::info("{}", plan.describe());
  if (opt.dry_run) return dry_run_summary(cfg, spec, plan, epochs, world);

  // ---- the model ---------------------------------------------------------------------------------
  ModelState state(cfg, meta, device);
  Evaluator evaluator(shard, comms, device);
  const auto propagation = spec.propagation(cfg, meta);
  evaluator.set_propagation(propagation.steps, propagation.alpha, propagation.center, propagation.keep_shares);
  plan.make_grid(state.net.num_parameters(), epochs.m());
  if (rank == 0 && plan.is_private() && plan.takes_steps())
    spdlog::info("noise: exact discrete Gaussian on a grid of {:.3g} (std {:.6g}, {:.3g} above sigma for the "
                 "rounding to the grid)",
                 plan.grid().gamma, plan.grid().sigma_effective, plan.grid().sigma_effective / plan.sigma() - 1.0);

  // ---- the bound run directory: create, or resume after every check --------------------------
  const RunProvenance provenance = RunProvenance::now(comm, device);
  if (rank == 0)
    spdlog::info("dpgnn {} (commit {}) on {} rank(s): {}", provenance.version, provenance.commit, world,
                 fmt::join(provenance.hosts, ", "));
  ThisStart now;
  now.config_text = dump_config(cfg);
  now.is_private = plan.is_private();
  now.noise_seed = cfg.privacy.noise_seed;
  now.train_seed = cfg.train.seed;
  now.ranks = world;
  now.device = device.is_cpu() ? "cpu" : "cuda";
  now.dataset_checksum = pf.dataset_checksum();
  now.partition_checksum = pf.meta().checksum;
  RunStart start = open_run_directory(dir, opt, now, provenance.to_json(), comm);
  if (start.finished) {
    if (rank == 0) spdlog::info("{}", start.finished_message);
    return finished_run_summary(cfg, dir.paths(), world, comm);
  }
  share_batch_secret(start.secrets, comm);
  plan.open_ledger(dir.paths().ledger().string(), start.ledger);

  // ---- a method's pre-training release: reused when recorded, else recorded before use -----
  const methods::PreRelease release =
      plan.release_before_training(cfg, pf, shard, comm, start.secrets.batch, &dir, start.ledger, epochs);
  if (release.labels)
    evaluator.set_label_evidence(release.labels->categories, release.labels->keep_probability, release.labels->nodes,
                                 release.labels->labels, cfg.dpar.choose_steps);
  if (!release.initial_weights.empty()) set_release_weights(state, release.initial_weights);
  if (start.start_step > 0) {
    state.load_from_rank0(dir.paths().checkpoint().string(), comm, rank);
    if (rank == 0) spdlog::info("resuming after step {} ({} steps in the ledger)", start.start_step, start.ledger_steps);
  }
  if (epochs.advance_to(start.start_step)) plan.follow(epochs);

  // ---- the steps ---------------------------------------------------------------------------------
  RunOutputs out(cfg, dir.paths(), pf, meta.multilabel, comm);
  // The noise is drawn on the cores the node's ranks leave free (at least one thread).
  const int noise_threads = std::max(1, available_cores() / std::max(1, opt.local_ranks) - threads);
  const FeatureStore features = FeatureStore::choose(cfg.train.features_on_device, shard, device);
  if (rank == 0) spdlog::info("batches: {}", features.describe());
  StepContext ctx{cfg, comms, shard, epochs, plan, state, start.secrets, release, opt.progress,
                  noise_threads, {}, {}, {}, &features};
  ctx.evaluate = [&](std::int64_t completed) { out.evaluate(completed, state, evaluator, plan); };
  ctx.checkpoint = [&](std::int64_t completed) { out.checkpoint(completed, state); };
  ctx.metrics = [&](const nlohmann::json& line) { out.metrics(line); };
  const LoopResult loop = run_steps(ctx, start.start_step, start.ledger_steps);

  // ---- the end -----------------------------------------------------------------------------------
  if (loop.stopped_by == "interrupted") return out.interrupted(loop, state);
  return out.finish(loop, state, evaluator, plan, epochs, provenance, t_start);
}

}  // namespace dpgnn::train
