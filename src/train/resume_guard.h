// Resume never spends the privacy budget twice (issue 13).
//
// The ledger records every step whose noisy gradient was released. A resume may only
// replay recorded steps bit-identically - same batch, same noise, so the same release
// again, which costs nothing - and that needs the checkpoint the replay starts from and
// the secrets that drew those batches and that noise. Whenever that is not possible, or
// the ledger itself is gone while the directory shows that training happened, the resume
// is refused before anything in the run directory is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpgnn::train {

struct ResumeFacts {
  bool ledger_exists = false;
  std::int64_t ledger_steps = 0;       // recorded (released) steps
  bool checkpoint_exists = false;
  std::int64_t checkpoint_step = 0;    // completed steps in the checkpoint (0 without one)
  bool secrets_available = false;      // pinned, or the kept secret files are all present
  std::vector<std::string> training_evidence;  // files that show training happened
};

// Why a private run must not resume from these facts, or "" when it may.
std::string resume_refusal(const ResumeFacts& facts);

// The files of `run_dir` that show a run trained (model.h5, checkpoint.h5, summary.json, a
// non-empty metrics.jsonl), by name.
std::vector<std::string> training_evidence(const std::string& run_dir);

}  // namespace dpgnn::train
