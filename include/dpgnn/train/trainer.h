// One distributed training run (DESIGN.md "Shape of one training run").
//
// Every rank calls run_training with the same config and its communicator; rank 0 owns
// the accountant, the ledger and the noise. The run directory layout (docs/outputs.md):
//   config.yaml     resolved configuration (every key)
//   ledger.jsonl    privacy ledger, one line per private step, flushed before use
//   metrics.jsonl   step, epsilon, steps/s (loss only when released: train.log_train_loss
//                   or a non-private method), and val/test metrics when evaluated
//   noise_secret, batch_secret   0600, while a private run lives (train/secrets.h)
//   run.json        the binding (run_directory.h) and each start's provenance (hosts, times)
//   releases/       pre-training releases (DPAR's DP-APPR rows), each recorded in the ledger
//                   with its digest before it was used
//   checkpoint.h5   the last checkpoint (parameters, optimiser state, step, checksums);
//                   removed when the run finishes unless train.keep_checkpoint
//   model.h5        the final parameters, one dataset per parameter named by module path
//   summary.json    the run's result (method, epsilon, accuracy, stopped_by, provenance, ...)
#pragma once

#include <cstdint>
#include <string>

#include "dpgnn/train/config.h"

namespace dpgnn::dist {
class Collectives;
}

namespace dpgnn::train {

struct TrainOptions {
  std::string out_dir;
  bool resume = false;
  bool force = false;     // reuse a non-empty run directory (never with an existing ledger)
  bool dry_run = false;   // load, sample, calibrate and report; no training, no outputs
  bool progress = true;   // human progress on rank 0 (only on a terminal or DPGNN_PROGRESS=1)
  int local_ranks = 1;    // ranks on this node (threads per rank = cores / local_ranks)
};

struct TrainSummary {
  std::string method;
  double epsilon = 0.0;  // spent (0 for non-private methods)
  double delta = 0.0;
  double target_epsilon = 0.0;
  double noise_multiplier = 0.0;
  double sigma = 0.0;
  std::int64_t steps = 0;
  int ranks = 1;
  std::int64_t batch_size = 0;
  std::int64_t subgraphs = 0;  // the population the accountant used
  std::string accountant;
  std::string epsilon_from;  // a dry run: pld | rdp, the accountant its epsilon would come from (none if not private)
  bool multilabel = false;
  double val_metric = 0.0;   // accuracy or micro-F1
  double test_metric = 0.0;
  double wall_seconds = 0.0;
  double steps_per_second = 0.0;
  std::string stopped_by;     // max_steps | target_epsilon | interrupted ("" for a dry run)
  int signal = 0;             // SIGINT / SIGTERM when interrupted
  bool already_finished = false;  // a --resume of a finished run: nothing was done
  bool is_private = false;    // run_is_private(config)
};

// The exit code of a run stopped by `signal` (SIGINT, SIGTERM): 128 + signal, as shells
// report a process killed by it; the run is checkpointed and resumable (docs/cli.md).
inline int interrupted_exit_code(int signal) { return 128 + signal; }

// The config text a run directory is bound to (its ledger header's, else run.json's), for
// `dpgnn train --resume --out RUN` without --config. UsageError when RUN holds no bound run.
std::string bound_config_text(const std::string& run_dir);

// Runs (or resumes) training. Collective over `comms` (the command opened it: on a GPU run
// with the rank's GPU bound, dist/collectives.h), which moves host buffers (start-up state,
// flags, checkpoints, halo plans) and device buffers (the gradient buffer, halo rows) each by
// its own path. Throws dpgnn::Error subclasses.
TrainSummary run_training(const Config& config, const TrainOptions& options, const dist::Collectives& comms);

}  // namespace dpgnn::train
