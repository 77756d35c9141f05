// The outputs of a run beside the ledger: metrics.jsonl, evaluations, checkpoints, and the
// end - model.h5, summary.json (with why the run stopped and its provenance), the ledger's end
// record, then the secrets and (unless train.keep_checkpoint) the checkpoint removed.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpgnn/train/config.h"
#include "dpgnn/train/trainer.h"
#include "evaluator.h"
#include "run_directory.h"
#include "step_loop.h"

namespace dpgnn::partition {
class PartitionFile;
}

namespace dpgnn::train {

class PrivacyPlan;
class SubgraphEpochs;

// Where and when a start of the run ran: dpgnn's version and commit, each rank's host, the
// device kind, the start time (UTC).
struct RunProvenance {
  std::string version, commit, device, started;
  std::vector<std::string> hosts;  // by rank
  static RunProvenance now(dist::Communicator& comm, c10::Device device);  // collective
  nlohmann::json to_json() const;
};

// UTC now as ISO 8601 ("2026-11-26T04:00:00Z").
std::string utc_now();

class RunOutputs {
 public:
  RunOutputs(const Config& cfg, const RunPaths& paths, const partition::PartitionFile& pf, bool multilabel,
             dist::Communicator& comm);
  // Collective: evaluates (averaged parameters when on) and logs a metrics line.
  void evaluate(std::int64_t completed, ModelState& state, Evaluator& evaluator, const PrivacyPlan& plan);
  void checkpoint(std::int64_t completed, const ModelState& state);  // rank 0 writes
  void metrics(const nlohmann::json& line);                           // rank 0 appends
  // Collective: a run stopped by a signal: checkpoint and say how to resume.
  TrainSummary interrupted(const LoopResult& loop, const ModelState& state);
  // Collective: the final evaluation and every end-of-run file (see above).
  TrainSummary finish(const LoopResult& loop, ModelState& state, Evaluator& evaluator, PrivacyPlan& plan,
                      const SubgraphEpochs& epochs, const RunProvenance& provenance,
                      std::chrono::steady_clock::time_point t_start);

 private:
  const Config& cfg_;
  RunPaths paths_;
  std::string config_text_;
  std::string dataset_checksum_, partition_checksum_;
  bool multilabel_;
  dist::Communicator& comm_;
  int world_, rank_;
  std::unique_ptr<std::ofstream> metrics_;
  std::unique_ptr<std::ofstream> metrics_csv_;  // metrics.jsonl's lines as rows of fixed columns
  std::vector<std::string> csv_columns_;
  EvalResult last_eval_;
  // train.model_selection best_val: the evaluated parameters (averaged when train.ema is on) of the
  // evaluation with the best validation metric so far, its step and result; kept in memory only
  // (a resumed run chooses among the evaluations it made since it resumed).
  at::Tensor best_parameters_;
  std::int64_t best_step_ = -1;
  EvalResult best_eval_;
  // Collective: keeps the evaluation just made when it is the best so far.
  void consider_for_selection(std::int64_t completed, ModelState& state);
  // Collective: puts the kept parameters in the model (or its average) before it is saved.
  void restore_selected(ModelState& state);
};

TrainSummary dry_run_summary(const Config& cfg, const methods::MethodSpec& spec, const PrivacyPlan& plan,
                             const SubgraphEpochs& epochs, int world);
// Collective: the summary of a finished run found by --resume (read from its summary.json at rank 0).
TrainSummary finished_run_summary(const Config& cfg, const RunPaths& paths, int world, dist::Communicator& comm);

}  // namespace dpgnn::train
