// The bound run directory (run_directory.h).
#include "run_directory.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "checkpoint.h"
#include "dpgnn/util/digest.h"
#include "dpgnn/util/error.h"
#include "dpgnn/train/trainer.h"
#include "dpgnn/util/version.h"
#include "resume_guard.h"

namespace dpgnn::train {
namespace fs = std::filesystem;

namespace {

std::string get_string(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_string()) throw DataError(where + ": " + std::string("binding field '") + key + "' missing or not a string");
  return j.at(key).get<std::string>();
}

StepSetup setup_of(const nlohmann::json& j, const std::string& where) {
  StepSetup s;
  if (!j.contains("ranks") || !j.at("ranks").is_number_integer())
    throw DataError(where + ": " + "field 'ranks' missing or not an integer");
  s.ranks = j.at("ranks").get<int>();
  s.device = get_string(j, "device", where);
  s.version = get_string(j, "version", where);
  s.noise_fingerprint = get_string(j, "noise_fingerprint", where);
  s.batch_fingerprint = get_string(j, "batch_fingerprint", where);
  return s;
}

// Why `now` cannot replay steps recorded with `then`, or "".
std::string replay_difference(const StepSetup& then, const StepSetup& now) {
  if (then.ranks != now.ranks)
    return "they were taken on " + std::to_string(then.ranks) + " rank(s), this start has " +
           std::to_string(now.ranks) + " (a replay is bit-identical only on the same rank count; resume on " +
           std::to_string(then.ranks) + ")";
  if (then.device != now.device)
    return "they were taken on device " + then.device + ", this start uses " + now.device;
  if (then.version != now.version)
    return "they were taken by dpgnn " + then.version + ", this is dpgnn " + now.version +
           " (the noise or the batches may differ between versions)";
  if (then.noise_fingerprint != now.noise_fingerprint || then.batch_fingerprint != now.batch_fingerprint)
    return "the run's secret files (noise_secret, batch_secret) are not the ones that drew them";
  return "";
}

StepSetup current_setup(const ThisStart& now, const RunSecrets& secrets) {
  StepSetup s;
  s.ranks = now.ranks;
  s.device = now.device;
  s.version = kVersion;
  if (now.is_private) {
    s.noise_fingerprint = secret_fingerprint(secrets.noise, "noise");
    s.batch_fingerprint = secret_fingerprint(secrets.batch, "batch");
  }
  return s;
}

void fsync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void refuse(const RunPaths& paths, const std::string& why) {
  throw UsageError(paths.dir.string() + ": refusing to resume: " + why + " (nothing was written)");
}

}  // namespace

nlohmann::json RunBinding::to_json() const {
  return {{"config", config_text},
          {"config_digest", config_digest},
          {"ranks", ranks},
          {"device", device},
          {"dataset_checksum", dataset_checksum},
          {"partition_checksum", partition_checksum},
          {"version", version},
          {"commit", commit},
          {"noise_fingerprint", noise_fingerprint},
          {"batch_fingerprint", batch_fingerprint}};
}

RunBinding RunBinding::from_json(const nlohmann::json& j, const std::string& where) {
  RunBinding b;
  b.config_text = get_string(j, "config", where);
  b.config_digest = get_string(j, "config_digest", where);
  const StepSetup s = setup_of(j, where);
  b.ranks = s.ranks;
  b.device = s.device;
  b.version = s.version;
  b.noise_fingerprint = s.noise_fingerprint;
  b.batch_fingerprint = s.batch_fingerprint;
  b.dataset_checksum = get_string(j, "dataset_checksum", where);
  b.partition_checksum = get_string(j, "partition_checksum", where);
  b.commit = get_string(j, "commit", where);
  if (blake2b_digest(b.config_text) != b.config_digest)
    throw DataError(where + ": " + "the bound config does not match its digest (the file was edited)");
  return b;
}

std::string read_text_file(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw IoError(p.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text_file(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError(tmp.string() + ": cannot write");
    out << text;
    if (!out.flush()) throw IoError(tmp.string() + ": cannot write");
  }
  fsync_path(tmp, O_RDONLY);
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) throw IoError(p.string() + ": cannot write: " + ec.message());
  fsync_path(p.parent_path().empty() ? fs::path(".") : p.parent_path(), O_RDONLY | O_DIRECTORY);
}

std::string first_config_difference(const std::string& a, const std::string& b) {
  std::stringstream sa(a), sb(b);
  std::string la, lb;
  while (true) {
    const bool ga = static_cast<bool>(std::getline(sa, la)), gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return "";
    if (la != lb || ga != gb) return "'" + (ga ? la : "") + "' in the run vs '" + (gb ? lb : "") + "' now";
  }
}

std::string bound_config_text(const std::string& run_dir) {
  const fs::path dir(run_dir);
  const RunPaths p{dir};
  if (fs::exists(p.ledger())) {
    const Ledger l = read_ledger_file(p.ledger().string());
    if (l.binding) return RunBinding::from_json(*l.binding, p.ledger().string() + ": header").config_text;
  }
  if (fs::exists(p.run_info())) {
    const auto j = nlohmann::json::parse(read_text_file(p.run_info()), nullptr, false);
    if (!j.is_discarded() && j.contains("binding"))
      return RunBinding::from_json(j.at("binding"), p.run_info().string()).config_text;
  }
  throw UsageError(dir.string() +
                   ": no bound run to resume (no ledger.jsonl header or run.json binding; a run started by dpgnn "
                   "0.1 needs --config with its original --set flags)");
}

RunStart RunDirectory::create(const ThisStart& now, const nlohmann::json& provenance) {
  fs::create_directories(paths_.dir);
  RunStart start;
  // Drawn now, kept (0600 files) last: the files a kill can leave are config.yaml, then
  // run.json, then the ledger's header (cluster/common.sh reads that order), then the secrets.
  const bool drawn = now.is_private && !now.noise_seed;
  start.secrets = drawn ? draw_secrets()
                        : *reproducible_secrets(now.is_private, now.noise_seed, now.train_seed, paths_.dir);
  const StepSetup setup = current_setup(now, start.secrets);
  binding_.config_text = now.config_text;
  binding_.config_digest = blake2b_digest(now.config_text);
  binding_.ranks = setup.ranks;
  binding_.device = setup.device;
  binding_.version = setup.version;
  binding_.commit = kCommit;
  binding_.noise_fingerprint = setup.noise_fingerprint;
  binding_.batch_fingerprint = setup.batch_fingerprint;
  binding_.dataset_checksum = now.dataset_checksum;
  binding_.partition_checksum = now.partition_checksum;
  write_text_file(paths_.config(), now.config_text);
  nlohmann::json info = {{"binding", binding_.to_json()},
                         {"dataset_checksum", now.dataset_checksum},
                         {"partition_checksum", now.partition_checksum},
                         {"ranks", now.ranks},
                         {"noise_seed_pinned", now.noise_seed.has_value()},
                         {"starts", nlohmann::json::array({provenance})}};
  write_text_file(paths_.run_info(), info.dump(2) + "\n");
  if (now.is_private) {
    LedgerWriter(paths_.ledger().string()).append_header(binding_.to_json());
    mark_ledger_opened(info);
  }
  if (drawn) keep_secrets(start.secrets, paths_.dir);
  return start;
}

// run.json records that the ledger's header was written: if the ledger is lost later, that
// record (which outlives the secrets and releases a user may delete with it) still shows that
// budget may have been spent, and a resume refuses (resume_guard.h).
void RunDirectory::mark_ledger_opened(nlohmann::json& info) const {
  info["ledger_opened"] = true;
  write_text_file(paths_.run_info(), info.dump(2) + "\n");
}

RunStart RunDirectory::resume(const ThisStart& now, const nlohmann::json& provenance) {
  RunStart start;
  const bool has_ledger = fs::exists(paths_.ledger());
  if (!has_ledger && !fs::exists(paths_.run_info()))
    throw UsageError(paths_.dir.string() + ": nothing to resume (no run.json or ledger.jsonl there); start the run "
                                           "without --resume");
  // ---- the binding: the ledger's header (private), else run.json's
  std::optional<Ledger> ledger;
  if (has_ledger) ledger = read_ledger_file(paths_.ledger().string());
  if (ledger && ledger->binding) {
    binding_ = RunBinding::from_json(*ledger->binding, paths_.ledger().string() + ": header");
  } else {
    if (ledger && !ledger->entries.empty())
      refuse(paths_, "ledger.jsonl has no binding header: it was written by dpgnn 0.1, whose runs cannot be "
                     "resumed safely by this version; start a new run");
    const auto j = nlohmann::json::parse(read_text_file(paths_.run_info()), nullptr, false);
    if (j.is_discarded() || !j.contains("binding"))
      refuse(paths_, "run.json holds no binding (a run started by dpgnn 0.1); start a new run");
    binding_ = RunBinding::from_json(j.at("binding"), paths_.run_info().string());
  }
  // ---- finished?
  if (ledger && ledger->end) {
    start.finished = true;
    start.finished_message = paths_.dir.string() + ": the run finished at step " +
                             ledger->end->value("steps", nlohmann::json(0)).dump() + " (stopped by " +
                             ledger->end->value("stopped_by", std::string("?")) +
                             "); nothing to resume: no step was trained and nothing was released";
    return start;
  }
  if (!now.is_private && fs::exists(paths_.summary())) {
    start.finished = true;
    start.finished_message = paths_.dir.string() + ": the run finished (summary.json); nothing to resume";
    return start;
  }
  // ---- the config and the data
  if (now.config_text != binding_.config_text)
    refuse(paths_, "a different config than the one the run is bound to (" +
                       first_config_difference(binding_.config_text, now.config_text) +
                       "); resume with `dpgnn train --resume --out " + paths_.dir.string() + "` alone");
  if (fs::exists(paths_.config())) {
    const std::string on_disk = read_text_file(paths_.config());
    if (on_disk != binding_.config_text)
      refuse(paths_, paths_.config().string() + " was edited since the run started (" +
                         first_config_difference(binding_.config_text, on_disk) +
                         "); the run is bound to the config in its ledger header: restore the file");
  }
  if (now.dataset_checksum != binding_.dataset_checksum || now.partition_checksum != binding_.partition_checksum)
    refuse(paths_, "the dataset or partition differs from the run's (checksums differ)");
  // ---- the checkpoint
  if (fs::exists(paths_.checkpoint())) {
    const CheckpointMeta cm = read_checkpoint_meta(paths_.checkpoint().string());
    if (cm.config_text != binding_.config_text || cm.dataset_checksum != binding_.dataset_checksum ||
        cm.partition_checksum != binding_.partition_checksum)
      refuse(paths_, "checkpoint.h5 does not belong to this run (its config or checksums differ from the binding)");
    start.start_step = cm.step;
  }
  // ---- the ledger, the replay and the secrets
  std::optional<RunSecrets> kept = reproducible_secrets(now.is_private, now.noise_seed, now.train_seed, paths_.dir);
  if (now.is_private) {
    start.ledger_steps = ledger ? sgd_steps(ledger->entries) : 0;
    const std::string refusal = resume_refusal(resume_facts(has_ledger, ledger, start.ledger_steps, start.start_step,
                                                            kept.has_value()));
    if (!refusal.empty()) refuse(paths_, refusal);
    if (start.ledger_steps > start.start_step) {
      // Every set-up that recorded a step in [start_step, ledger_steps) must be this one.
      const StepSetup mine = current_setup(now, *kept);
      StepSetup active = setup_of(*ledger->binding, "header");
      auto check = [&](const StepSetup& then) {
        const std::string diff = replay_difference(then, mine);
        if (!diff.empty())
          refuse(paths_, "the ledger records " + std::to_string(start.ledger_steps - start.start_step) +
                             " step(s) after the checkpoint to replay, but " + diff);
      };
      for (const auto& seg : ledger->segments) {
        const auto after = seg.at("after_step").get<std::int64_t>();
        if (after <= start.start_step) active = setup_of(seg, "resume segment");
      }
      check(active);
      for (const auto& seg : ledger->segments) {
        const auto after = seg.at("after_step").get<std::int64_t>();
        if (after > start.start_step && after < start.ledger_steps) check(setup_of(seg, "resume segment"));
      }
    }
    if (ledger) {
      for (const auto& r : ledger->releases) {
        const bool same_key = kept && secret_fingerprint(kept->batch, "batch") == r.key_fingerprint;
        if (fs::exists(paths_.dir / r.file))
          read_release(r);  // unaltered
        else if (!same_key)
          refuse(paths_, "the release '" + r.name + "' recorded in ledger.jsonl is missing (" +
                             (paths_.dir / r.file).string() +
                             ") and the secret that drew it is gone: it is never computed again with another secret "
                             "(that would release the private data twice)");
        if (r.subsample && !same_key)
          refuse(paths_, "the run's examples are a hidden sample keyed by its batch secret, which is gone or "
                         "replaced (batch_secret): the sample cannot be rebuilt");
      }
    }
  }
  // ---- every check passed: write
  start.secrets = kept ? *kept : fresh_secrets(paths_.dir);
  if (!fs::exists(paths_.config())) write_text_file(paths_.config(), binding_.config_text);
  if (now.is_private) {
    LedgerWriter w(paths_.ledger().string());
    if (!ledger || !ledger->binding) {
      w.append_header(binding_.to_json());  // the ledger was never written (no step, no release)
      if (fs::exists(paths_.run_info())) {
        auto info = nlohmann::json::parse(read_text_file(paths_.run_info()), nullptr, false);
        if (!info.is_discarded() && info.is_object()) mark_ledger_opened(info);
      }
    } else {
      const StepSetup mine = current_setup(now, start.secrets);
      nlohmann::json seg = provenance;
      seg["after_step"] = start.ledger_steps;
      seg["ranks"] = mine.ranks;
      seg["device"] = mine.device;
      seg["version"] = mine.version;
      seg["commit"] = kCommit;
      seg["noise_fingerprint"] = mine.noise_fingerprint;
      seg["batch_fingerprint"] = mine.batch_fingerprint;
      w.append_segment(seg);
    }
  }
  if (fs::exists(paths_.run_info())) {
    auto info = nlohmann::json::parse(read_text_file(paths_.run_info()), nullptr, false);
    if (!info.is_discarded() && info.is_object()) {
      info["starts"].push_back(provenance);
      write_text_file(paths_.run_info(), info.dump(2) + "\n");
    }
  }
  start.ledger = std::move(ledger);
  return start;
}

ResumeFacts RunDirectory::resume_facts(bool has_ledger, const std::optional<Ledger>& ledger, std::int64_t ledger_steps,
                                       std::int64_t checkpoint_step, bool secrets_kept) const {
  const std::string dir = paths_.dir.string();
  ResumeFacts f;
  f.ledger_exists = has_ledger;
  f.ledger_steps = ledger_steps;
  f.checkpoint_exists = fs::exists(paths_.checkpoint());
  f.checkpoint_step = checkpoint_step;
  f.secrets_available = secrets_kept;
  f.training_evidence = training_evidence(dir);
  f.stored_releases = stored_releases(dir);
  if (ledger)
    for (const auto& r : ledger->releases) f.recorded_releases.push_back(r.file);
  if (fs::exists(noise_secret_file(paths_.dir))) f.secret_files.emplace_back("noise_secret");
  if (fs::exists(batch_secret_file(paths_.dir))) f.secret_files.emplace_back("batch_secret");
  f.ledger_was_opened = ledger_opened_in_run_info(dir);
  return f;
}

std::string RunDirectory::read_release(const ReleaseRecord& r) const {
  const fs::path file = paths_.dir / r.file;
  if (!fs::exists(file))
    refuse(paths_, "the release '" + r.name + "' recorded in ledger.jsonl is missing (" + file.string() +
                       "); it is never recomputed (that would release the private data again)");
  std::string bytes = read_text_file(file);
  if (blake2b_digest(bytes) != r.digest)
    refuse(paths_, file.string() + " does not match the digest its ledger record holds (the stored release was "
                                   "altered)");
  return bytes;
}

void RunDirectory::store_release(const std::string& relative_file, const std::string& bytes) const {
  const fs::path file = paths_.dir / relative_file;
  fs::create_directories(file.parent_path());
  write_text_file(file, bytes);
}

}  // namespace dpgnn::train
