#include "step_loop.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <chrono>

#include "batch_pipeline.h"
#include "checkpoint.h"
#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/model/clipping.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/sampling/batch.h"
#include "dpgnn/noise/discrete_gaussian.h"
#include "dpgnn/noise/prefetch.h"
#include "dpgnn/util/log.h"
#include "fault_points.h"
#include "privacy_plan.h"
#include "stop_signals.h"
#include "subgraph_epochs.h"

namespace dpgnn::train {
namespace {

// grid_sum += the step's exact noise (integers on the grid, summed exactly in float64). On the CPU
// in place; on a device the noise is drawn on the host as always (noise/prefetch.h), copied
// there and added, and both copies are zeroed after use, so the sum never leaves the device.
void add_noise(noise::NoisePrefetcher& noise, at::Tensor& grid_sum, std::uint64_t step, std::uint64_t variance) {
  if (grid_sum.device().is_cpu() && grid_sum.is_contiguous()) {
    noise.add_to(grid_sum.data_ptr<double>(), step, variance);
    return;
  }
  at::Tensor host = torch::zeros({grid_sum.numel()}, torch::TensorOptions().dtype(torch::kFloat64));
  noise.add_to(host.data_ptr<double>(), step, variance);
  at::Tensor on_device = host.to(grid_sum.device());
  host.zero_();
  grid_sum.add_(on_device);
  on_device.zero_();
}

using Clock = std::chrono::steady_clock;

// The stop codes rank 0 puts in the all-reduce.
constexpr double kStopMaxSteps = 1.0, kStopBudget = 2.0;

std::string stop_reason(double code) { return code > 1.5 ? "target_epsilon" : "max_steps"; }

}  // namespace

ModelState::ModelState(const Config& cfg, const graph::DatasetMeta& meta, c10::Device device)
    : net(methods::model_config(cfg, meta), cfg.train.seed, device) {
  model::OptimizerConfig oc;
  oc.type = model::parse_optimizer(cfg.train.optimizer);
  oc.lr = cfg.train.lr;
  oc.momentum = cfg.train.momentum;
  oc.weight_decay = cfg.train.weight_decay;
  oc.validate();
  optimizer = model::make_optimizer(oc, net.num_parameters(), device);
  if (cfg.train.ema > 0) ema = net.flatten().clone();
}

void ModelState::with_average(const std::function<void()>& fn) {
  if (!ema.defined()) return fn();
  const at::Tensor current = net.flatten();
  net.unflatten(ema);
  fn();
  net.unflatten(current);
}

void ModelState::load_from_rank0(const std::string& checkpoint, dist::Communicator& comm, int rank) {
  const auto P = static_cast<std::size_t>(net.num_parameters());
  const c10::Device device = net.device();
  if (rank == 0) load_checkpoint_state(checkpoint, net, *optimizer, ema.defined() ? &ema : nullptr);
  if (ema.defined()) {
    at::Tensor e = ema.to(torch::kCPU).contiguous();
    comm.broadcast(e.data_ptr<float>(), P, 0);
    ema = e.to(device);
  }
  at::Tensor flat = net.flatten().to(torch::kCPU).contiguous();
  comm.broadcast(flat.data_ptr<float>(), P, 0);
  net.unflatten(flat.to(device));
  model::NamedTensors st = optimizer->state();
  for (auto& [name, t] : st) {
    at::Tensor c = t.to(torch::kCPU).contiguous();
    if (c.scalar_type() == torch::kInt64) {
      comm.broadcast(c.data_ptr<std::int64_t>(), static_cast<std::size_t>(c.numel()), 0);
    } else {
      c = c.to(torch::kFloat64).contiguous();
      comm.broadcast(c.data_ptr<double>(), static_cast<std::size_t>(c.numel()), 0);
    }
    t = c.to(t.device(), t.scalar_type());
  }
  optimizer->load_state(st);
}

namespace {

// Collective: may the first step run at all? Rank 0 decides (the step limit, the budget).
double stop_before_first_step(StepContext& ctx, std::int64_t start_step, std::int64_t ledger_steps) {
  double stop = 0.0;
  if (ctx.comms.rank() == 0) {
    if (start_step >= ctx.plan.max_steps()) stop = kStopMaxSteps;
    else if (ctx.plan.is_private() && start_step >= ledger_steps && ctx.plan.next_step_exceeds()) stop = kStopBudget;
  }
  ctx.comms.broadcast(&stop, 1, 0);
  return stop;
}

// Rank 0, after each step: the metrics line, and a progress line at most every 2 s.
void report_step(StepContext& ctx, const LoopResult& r, double last_loss, bool release_loss, std::int64_t end_step,
                 Clock::time_point loop_start, Clock::time_point& last_progress) {
  const bool priv = ctx.plan.is_private();
  const double secs = std::chrono::duration<double>(Clock::now() - loop_start).count();
  const double rate = secs > 0 ? static_cast<double>(r.steps_this_run) / secs : 0.0;
  nlohmann::json line = {{"step", r.step}, {"steps_per_second", rate}};
  if (release_loss) line["loss"] = last_loss;  // private labels, no noise: off by default
  if (priv) line["epsilon"] = ctx.plan.epsilon_bound();
  ctx.metrics(line);
  const auto now = Clock::now();
  if (ctx.progress && progress_enabled() && std::chrono::duration<double>(now - last_progress).count() > 2.0) {
    last_progress = now;
    const double eta = rate > 0 ? static_cast<double>(end_step - r.step) / rate : 0.0;
    spdlog::info("step {}/{}{}{} {:.2f} steps/s ETA {:.0f} s", r.step, end_step,
                 release_loss ? fmt::format(" loss {:.4f}", last_loss) : "",
                 priv ? fmt::format(" epsilon {:.3f}/{}", ctx.plan.epsilon_bound(), ctx.cfg.privacy.target_epsilon) : "",
                 rate, eta);
  }
}

}  // namespace

LoopResult run_steps(StepContext& ctx, std::int64_t start_step, std::int64_t ledger_steps) {
  const Config& cfg = ctx.cfg;
  const int rank = ctx.comms.rank();
  const bool priv = ctx.plan.is_private();
  const bool release_loss = !priv || cfg.train.log_train_loss;
  model::Gnn& net = ctx.state.net;
  const std::int64_t P = net.num_parameters();
  const model::ClipConfig clip_cfg = cfg.privacy.clipping == "per-layer"
                                         ? model::ClipConfig::per_layer_equal(cfg.privacy.clip_norm, net.num_layers())
                                         : model::ClipConfig::flat(cfg.privacy.clip_norm);
  const StopSignals signals;
  LoopResult r;
  r.step = start_step;

  double stop = stop_before_first_step(ctx, start_step, ledger_steps);
  if (stop > 0) r.stopped_by = stop_reason(stop);
  // The step the run will stop at, for the ETA (rank 0).
  const std::int64_t end_step = rank == 0 ? ctx.plan.budget_end(start_step, ctx.plan.max_steps()) : 0;

  // [gradient | loss | count | stop | interrupt] in float64: a private run's gradient travels as
  // integers on the noise grid (noise/discrete_gaussian.h), which a float64 all-reduce sums exactly.
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(net.device());
  at::Tensor buffer = torch::zeros({P + 4}, f64);
  at::Tensor grad = torch::zeros({P}, torch::TensorOptions().dtype(net.dtype()).device(net.device()));
  // Rank 0 draws step t + 1's noise on spare cores while step t is computed (the noise depends
  // only on the secret, the step and the variance: noise/prefetch.h); bit-identical to drawing it
  // in the step.
  std::unique_ptr<noise::NoisePrefetcher> noise;
  if (priv && rank == 0 && stop == 0.0) {
    noise = std::make_unique<noise::NoisePrefetcher>(ctx.secrets.noise, static_cast<std::size_t>(P), ctx.noise_threads);
    noise->request(static_cast<std::uint64_t>(start_step), ctx.plan.grid().variance);
  }
  const auto loop_start = Clock::now();
  auto last_progress = loop_start;
  // Stage timings at debug level (DPGNN_LOG_LEVEL=debug, bench/cost_of_privacy.sh DEBUG=1).
  const bool timing = spdlog::should_log(spdlog::level::debug);
  auto t_lap = Clock::now();
  auto lap = [&]() {
    const auto now = Clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - t_lap).count();
    t_lap = now;
    return ms;
  };
  // Step t + 1's batch is built on a background thread while step t computes (batch_pipeline.h).
  BatchPipeline batches(ctx);
  while (stop == 0.0) {
    const std::int64_t step = r.step;
    const bool replay = step < ledger_steps;  // recorded before a crash: same batch, same noise
    if (timing) lap();
    const BatchPipeline::StepBatch step_batch = batches.take(step);
    const std::vector<Pick>& picks = step_batch.picks;
    if (step + 1 < ctx.plan.max_steps()) batches.request(step + 1);
    const double ms_batch = timing ? lap() : 0.0;
    double ms_grad = 0.0;
    grad.zero_();
    const model::DropoutKey dkey{cfg.train.seed, step};
    double loss_sum = 0.0;
    if (!picks.empty()) {
      const model::Batch& batch = step_batch.batch;
      loss_sum = priv ? model::clipped_gradient_sum(net, batch, clip_cfg, dkey, grad).loss_sum
                      : model::gradient_sum(net, batch, dkey, grad);
      if (timing) ms_grad = lap();
    }
    double stop_code = 0.0;
    if (rank == 0) {
      if (priv && !replay) {
        ctx.plan.record_step(step);  // durable before anything uses the step's result
        fault_point_after_step(step);
      }
      if (step + 1 >= ctx.plan.max_steps()) stop_code = kStopMaxSteps;
    }
    at::Tensor grid_sum = buffer.narrow(0, 0, P);
    if (priv) {
      grid_sum.copy_(grad.to(torch::kFloat64).div_(ctx.plan.grid().gamma).round_());  // this rank's k_r
      if (rank == 0) add_noise(*noise, grid_sum, static_cast<std::uint64_t>(step), ctx.plan.grid().variance);
    } else {
      grid_sum.copy_(grad);
    }
    const double ms_noise = timing ? lap() : 0.0;
    // DRW-D: the next step's subgraph set is needed to decide whether it fits the budget (a
    // new set drops the batch prefetched from the old one).
    batches.settle();
    if (ctx.epochs.advance_to(step + 1)) {
      batches.drop();
      ctx.plan.follow(ctx.epochs);
    }
    if (noise) noise->request(static_cast<std::uint64_t>(step) + 1, ctx.plan.grid().variance);
    if (rank == 0 && priv && stop_code == 0.0 && step + 1 >= ledger_steps && ctx.plan.next_step_exceeds())
      stop_code = kStopBudget;
    buffer[P] = loss_sum;
    buffer[P + 1] = static_cast<double>(picks.size());
    buffer[P + 2] = stop_code;
    buffer[P + 3] = StopSignals::received() != 0 ? 1.0 : 0.0;
    // Where the buffer lives picks the path (over NCCL on a GPU, or staged through host memory).
    ctx.comms.allreduce_sum(buffer.data_ptr<double>(), static_cast<std::size_t>(P + 4));
    const double ms_allreduce = timing ? lap() : 0.0;
    // The released noisy sum is the integer vector; the gradient is its post-processing.
    const at::Tensor noisy = priv ? buffer.narrow(0, 0, P) * ctx.plan.grid().gamma : buffer.narrow(0, 0, P);
    ctx.state.optimizer->step(net.flat_parameters(), noisy.to(net.dtype()), ctx.epochs.m());
    if (ctx.state.ema.defined()) {
      torch::NoGradGuard no_grad;
      ctx.state.ema.mul_(cfg.train.ema).add_(net.flat_parameters(), 1.0 - cfg.train.ema);
    }
    if (timing) {
      spdlog::debug("step {} stages: batch {:.1f} ms, gradient {:.1f} ms, grid and noise {:.1f} ms, "
                    "all-reduce {:.1f} ms, optimizer {:.1f} ms",
                    step, ms_batch, ms_grad, ms_noise, ms_allreduce, lap());
    }
    const at::Tensor tail = buffer.narrow(0, P, 4).to(torch::kCPU);
    const double last_loss = tail[0].item<double>() / std::max(1.0, tail[1].item<double>());
    stop = tail[2].item<double>();
    const bool interrupted = tail[3].item<double>() > 0.5;
    r.step = step + 1;
    ++r.steps_this_run;
    if (stop > 0) r.stopped_by = stop_reason(stop);
    if (interrupted && stop == 0.0) {
      stop = -1.0;
      r.stopped_by = "interrupted";
      r.signal = StopSignals::received();
    }

    if (rank == 0) report_step(ctx, r, last_loss, release_loss, end_step, loop_start, last_progress);
    if (stop != 0.0) break;
    if (cfg.train.eval_every > 0 && r.step % cfg.train.eval_every == 0) ctx.evaluate(r.step);
    if (cfg.train.checkpoint_every > 0 && r.step % cfg.train.checkpoint_every == 0) ctx.checkpoint(r.step);
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - loop_start).count();
  return r;
}

}  // namespace dpgnn::train
