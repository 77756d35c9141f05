// The steps of a run (DESIGN.md "Shape of one training run"): every step the same uniform
// batch of m of the M subgraph ids on every rank (a pure function of the batch secret and
// the step), clipped per-subgraph gradients of the ids this rank owns summed into one flat
// buffer rounded to the noise grid, rank 0 records the step in the ledger (durable) and adds
// the discrete Gaussian once, ONE all-reduce of [gradient | loss | count | stop | interrupt],
// then the identical optimiser step on every rank.
// Stopping: rank 0 asks the accountant whether the NEXT step would exceed the target; the
// answer rides in this step's all-reduce, so no step over budget is ever taken. A SIGINT or
// SIGTERM on any rank rides in the same all-reduce: every rank stops at that step boundary.
// Resume: steps recorded before the crash (step < ledger_steps) are replayed with the same
// batch and noise (keyed by step), which releases nothing new.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "dpgnn/model/gnn.h"
#include "dpgnn/model/optimizer.h"
#include "dpgnn/train/config.h"
#include "evaluator.h"
#include "methods/method.h"
#include "secrets.h"

namespace dpgnn::dist {
class Collectives;
class Communicator;
}

namespace dpgnn::train {

class PrivacyPlan;
class SubgraphEpochs;
class FeatureStore;

// The parameters, the optimiser and the parameter average (Polyak-Ruppert / EMA, used for
// evaluation: post-processing of the released iterates).
struct ModelState {
  ModelState(const Config& cfg, const graph::DatasetMeta& meta, c10::Device device);
  model::Gnn net;
  std::unique_ptr<model::Optimizer> optimizer;
  at::Tensor ema;  // undefined when train.ema is 0
  // Runs fn with the averaged parameters in the model (when the average is on).
  void with_average(const std::function<void()>& fn);
  // Collective: rank 0 reads the checkpoint and broadcasts it (no shared file system needed).
  void load_from_rank0(const std::string& checkpoint, dist::Communicator& comm, int rank);
};

struct StepContext {
  const Config& cfg;
  const dist::Collectives& comms;
  const partition::Shard& shard;
  SubgraphEpochs& epochs;
  PrivacyPlan& plan;
  ModelState& state;
  const RunSecrets& secrets;
  const methods::PreRelease& release;
  bool progress = true;
  int noise_threads = 1;  // rank 0's threads drawing the next step's noise
  std::function<void(std::int64_t completed)> evaluate;    // collective
  std::function<void(std::int64_t completed)> checkpoint;  // rank 0 writes
  std::function<void(const nlohmann::json&)> metrics;      // rank 0 appends a line
  const FeatureStore* features = nullptr;  // where the batches' rows are gathered; null: the host
};

struct LoopResult {
  std::int64_t step = 0;            // completed steps
  std::int64_t steps_this_run = 0;
  double seconds = 0.0;
  std::string stopped_by;           // max_steps | target_epsilon | interrupted
  int signal = 0;                   // the signal that interrupted it (SIGINT / SIGTERM)
};

// Runs steps from `start_step` until a stop; `ledger_steps` steps are already recorded.
LoopResult run_steps(StepContext& ctx, std::int64_t start_step, std::int64_t ledger_steps);

}  // namespace dpgnn::train
