// The resume refusal rules (see resume_guard.h).
#include "resume_guard.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace dpgnn::train {
namespace fs = std::filesystem;

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The release a stored file holds: its name without the ".tmp" of an interrupted write.
std::string release_of_file(const std::string& file) {
  const std::string tmp = ".tmp";
  if (file.size() > tmp.size() && file.compare(file.size() - tmp.size(), tmp.size(), tmp) == 0)
    return file.substr(0, file.size() - tmp.size());
  return file;
}

std::string missing_ledger_refusal(const ResumeFacts& f) {
  std::vector<std::string> found = f.stored_releases;
  found.insert(found.end(), f.training_evidence.begin(), f.training_evidence.end());
  found.insert(found.end(), f.secret_files.begin(), f.secret_files.end());
  if (f.ledger_was_opened) found.emplace_back("run.json's record that the ledger was opened");
  if (found.empty()) return "";  // stopped before the ledger was written: nothing was released
  return "ledger.jsonl is missing, but the run directory shows that privacy budget was spent or may have been (" +
         joined(found) +
         "): the ledger that counted it is gone, so the run cannot continue (a resume would draw its releases and "
         "steps again and spend the budget twice, while the new ledger counted them once); start a new run in "
         "another --out";
}

}  // namespace

std::string resume_refusal(const ResumeFacts& f) {
  if (!f.ledger_exists) return missing_ledger_refusal(f);
  std::vector<std::string> unrecorded;
  for (const auto& file : f.stored_releases)
    if (std::find(f.recorded_releases.begin(), f.recorded_releases.end(), release_of_file(file)) ==
        f.recorded_releases.end())
      unrecorded.push_back(file);
  if (!unrecorded.empty())
    return "the stored release(s) " + joined(unrecorded) +
           " have no record in ledger.jsonl (the ledger lost the record that counted them: it was truncated or "
           "replaced): the budget they spent is unknown, so the run cannot continue";
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

std::vector<std::string> stored_releases(const std::string& run_dir) {
  std::vector<std::string> found;
  const fs::path dir = fs::path(run_dir) / "releases";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return found;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec))
    if (!entry.is_directory()) found.push_back(fs::relative(entry.path(), run_dir).generic_string());
  std::sort(found.begin(), found.end());
  return found;
}

bool ledger_opened_in_run_info(const std::string& run_dir) {
  std::ifstream in(fs::path(run_dir) / "run.json");
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  const auto info = nlohmann::json::parse(ss.str(), nullptr, false);
  return !info.is_discarded() && info.is_object() && info.value("ledger_opened", false);
}

std::string overwrite_refusal(const std::string& run_dir) {
  const std::vector<std::string> releases = stored_releases(run_dir);
  if (!releases.empty())
    return run_dir + " holds stored releases (" + joined(releases) +
           ") but no ledger.jsonl: budget was spent on them and the ledger that counted it is gone; --force never "
           "overwrites them (choose another --out)";
  if (ledger_opened_in_run_info(run_dir) && !fs::exists(fs::path(run_dir) / "summary.json"))
    return run_dir + " holds an unfinished private run whose ledger.jsonl is gone (run.json records that it was "
                     "opened): --force never starts over it (choose another --out)";
  return "";
}

}  // namespace dpgnn::train
