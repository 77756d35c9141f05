// Resume never spends the privacy budget twice (issues 13 and 34).
//
// The ledger records every step whose noisy gradient was released and every pre-training
// release (with its digest). A resume may only replay recorded steps bit-identically - same
// batch, same noise, so the same release again, which costs nothing - and reuse each stored
// release; that needs the checkpoint the replay starts from and the secrets that drew those
// batches and that noise. Whenever that is not possible, or the ledger itself is gone while
// the directory shows that budget was (or may have been) spent, the resume is refused before
// anything in the run directory is written.
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
  // Evidence that the ledger existed and spent budget, for when it is gone: run.json's
  // record that the ledger's header was written, and the secret files (written after it).
  bool ledger_was_opened = false;
  std::vector<std::string> secret_files;        // "noise_secret", "batch_secret" when present
  std::vector<std::string> stored_releases;     // files under releases/ ("releases/x.json")
  std::vector<std::string> recorded_releases;   // the files the ledger's release records name
};

// Why a private run must not resume from these facts, or "" when it may.
std::string resume_refusal(const ResumeFacts& facts);

// The files of `run_dir` that show a run trained (model.h5, checkpoint.h5, summary.json, a
// non-empty metrics.jsonl), by name.
std::vector<std::string> training_evidence(const std::string& run_dir);

// The files under `run_dir`/releases/, relative to `run_dir` and sorted ("releases/x.json";
// a ".tmp" left by a kill while one was written counts too): each is a release that was
// drawn, so budget was spent on it.
std::vector<std::string> stored_releases(const std::string& run_dir);

// Whether `run_dir`/run.json records that the run's ledger header was written.
bool ledger_opened_in_run_info(const std::string& run_dir);

// Why `train --force` must not start a new run over `run_dir` (which holds no ledger), or ""
// when it may: a stored release was drawn there (budget spent; the ledger that counted it is
// gone), or run.json records that a private run's ledger was opened there and that run never
// finished (no summary.json). Either would be overwritten by a new run's draws.
std::string overwrite_refusal(const std::string& run_dir);

}  // namespace dpgnn::train
