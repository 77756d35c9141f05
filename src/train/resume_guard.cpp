// The resume refusal rules (see resume_guard.h).
#include "resume_guard.h"

#include <filesystem>

namespace dpgnn::train {
namespace fs = std::filesystem;

std::string resume_refusal(const ResumeFacts& f) {
  if (!f.ledger_exists) {
    if (f.training_evidence.empty()) return "";  // stopped before the first step: nothing was released
    std::string files;
    for (const auto& e : f.training_evidence) files += (files.empty() ? "" : ", ") + e;
    return "ledger.jsonl is missing but the run directory shows training happened (" + files +
           "): the budget it recorded cannot be recovered, so the run cannot continue";
  }
  if (f.ledger_steps < f.checkpoint_step)
    return "ledger.jsonl holds fewer steps (" + std::to_string(f.ledger_steps) + ") than the checkpoint (" +
           std::to_string(f.checkpoint_step) + "): the ledger was truncated";
  const std::int64_t replay = f.ledger_steps - f.checkpoint_step;
  if (replay > 0 && !f.secrets_available)
    return "the ledger records " + std::to_string(replay) + " released step(s) after the checkpoint (steps " +
           std::to_string(f.checkpoint_step) + ".." + std::to_string(f.ledger_steps - 1) +
           ")" + (f.checkpoint_exists ? "" : " (there is no checkpoint.h5)") + ", and the run's secrets (noise_secret, batch_secret) are gone: they cannot be replayed "
           "bit-identically, and retraining them would spend the budget twice";
  return "";
}

std::vector<std::string> training_evidence(const std::string& run_dir) {
  std::vector<std::string> found;
  for (const char* name : {"checkpoint.h5", "model.h5", "summary.json"})
    if (fs::exists(fs::path(run_dir) / name)) found.emplace_back(name);
  std::error_code ec;
  const auto metrics = fs::path(run_dir) / "metrics.jsonl";
  if (fs::exists(metrics) && fs::file_size(metrics, ec) > 0 && !ec) found.emplace_back("metrics.jsonl");
  return found;
}

}  // namespace dpgnn::train
