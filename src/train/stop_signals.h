// SIGINT / SIGTERM stop a run at the next step boundary instead of killing it: the handler
// only sets a flag, which the step loop reads and shares in its all-reduce, so every rank
// stops after the same step, checkpoints, and the run can be resumed (docs/cli.md).
#pragma once

namespace dpgnn::train {

class StopSignals {
 public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // restores the previous ones
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The signal received since installation (0 = none).
  static int received();
};

}  // namespace dpgnn::train
