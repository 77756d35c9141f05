// The run directory as a bound, write-ahead record (DESIGN.md 8; docs/privacy.md "Resume").
//
// A fresh run binds the directory to what it runs: the effective config (after --set) and
// its digest, the rank count and device kind, the dataset's and partition's checksums, the
// dpgnn version, and keyed fingerprints of its secrets (util/digest.h; never the secrets).
// The binding is the ledger's first line (private runs) and run.json's "binding" (every
// run). A resume checks itself against the binding, not against config.yaml (which anyone
// can edit), and refuses - before it writes anything - any difference that could change a
// step it must replay, naming what differs:
//   - another config (the first differing key), an edited config.yaml, other data;
//   - with steps to replay (recorded after the last checkpoint): another rank count, device
//     kind, dpgnn version or secrets than the set-up that recorded them (the ledger's resume
//     segments say which); without any, another rank count is an elastic restart;
//   - a hidden graph sample whose batch secret is gone (the sample is keyed by it);
//   - a release record whose stored file is missing or does not match its digest;
//   - a missing ledger where anything shows that budget was spent or may have been (a stored
//     release, training output, the secret files, run.json's record that the ledger was
//     opened), and a stored release that the ledger does not record (resume_guard.h).
// A run whose ledger ends in an end record (or, non-private, that has summary.json) is
// finished: a resume says so and changes nothing.
//
// Everything here runs on rank 0; the trainer broadcasts the outcome.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dpgnn/train/ledger.h"
#include "resume_guard.h"
#include "secrets.h"

namespace dpgnn::train {

struct RunPaths {
  std::filesystem::path dir;
  std::filesystem::path config() const { return dir / "config.yaml"; }
  std::filesystem::path ledger() const { return dir / "ledger.jsonl"; }
  std::filesystem::path metrics() const { return dir / "metrics.jsonl"; }
  std::filesystem::path metrics_csv() const { return dir / "metrics.csv"; }  // the same lines, a table
  std::filesystem::path checkpoint() const { return dir / "checkpoint.h5"; }
  std::filesystem::path model() const { return dir / "model.h5"; }
  std::filesystem::path summary() const { return dir / "summary.json"; }
  std::filesystem::path run_info() const { return dir / "run.json"; }
  // A stored pre-training release, relative to dir (the ledger records it so).
  static std::string release_file(const std::string& name) { return "releases/" + name + ".json"; }
};

// What a run is bound to (see above).
struct RunBinding {
  std::string config_text;
  std::string config_digest;
  int ranks = 1;
  std::string device;  // "cpu" or "cuda"
  std::string dataset_checksum;
  std::string partition_checksum;
  std::string version;
  std::string commit;
  std::string noise_fingerprint;  // empty for non-private runs
  std::string batch_fingerprint;

  nlohmann::json to_json() const;
  // Throws DataError naming `where` for a missing or mistyped field.
  static RunBinding from_json(const nlohmann::json& j, const std::string& where);
};

// The part of a binding a replayed step depends on: what the ledger's header or its latest
// resume segment says the steps after it were taken with.
struct StepSetup {
  int ranks = 1;
  std::string device;
  std::string version;
  std::string noise_fingerprint;
  std::string batch_fingerprint;
  bool operator==(const StepSetup& o) const {
    return ranks == o.ranks && device == o.device && version == o.version && noise_fingerprint == o.noise_fingerprint &&
           batch_fingerprint == o.batch_fingerprint;
  }
};


// What this start of the run is (rank 0).
struct RunStart {
  bool finished = false;           // a finished run: nothing to do
  std::string finished_message;
  std::int64_t start_step = 0;     // first step to compute (the checkpoint's)
  std::int64_t ledger_steps = 0;   // steps already recorded (replayed, not recorded again)
  std::optional<Ledger> ledger;    // the ledger as read (a resume of a private run)
  RunSecrets secrets;
};

// The facts of this start that the binding is checked against.
struct ThisStart {
  std::string config_text;  // dump_config of the effective config
  bool is_private = false;
  std::optional<std::uint64_t> noise_seed;  // privacy.noise_seed (pinned secrets)
  std::uint64_t train_seed = 0;
  int ranks = 1;
  std::string device;
  std::string dataset_checksum;
  std::string partition_checksum;
};

class RunDirectory {
 public:
  explicit RunDirectory(std::filesystem::path dir) : paths_{std::move(dir)} {}
  const RunPaths& paths() const { return paths_; }

  // Fresh run: config.yaml, run.json, (private) the ledger's header and run.json's record of
  // it, then the secret files, in that order.
  RunStart create(const ThisStart& now, const nlohmann::json& provenance);
  // Resume: every check first (UsageError naming the difference; nothing written), then the
  // secrets (kept, or fresh when nothing needs the old ones) and the ledger's resume segment.
  RunStart resume(const ThisStart& now, const nlohmann::json& provenance);

  // The binding recorded at create() (or read at resume()).
  const RunBinding& binding() const { return binding_; }

  bool has_release(const ReleaseRecord& record) const {
    return std::filesystem::exists(paths_.dir / record.file);
  }
  // Reads and checks a stored release against its record (UsageError when missing or altered).
  std::string read_release(const ReleaseRecord& record) const;
  // Stores a release's bytes (temporary file, fsync, rename). The caller records it in the
  // ledger FIRST (write-ahead), so a crash never leaves an uncounted release on disk.
  void store_release(const std::string& relative_file, const std::string& bytes) const;

 private:
  void mark_ledger_opened(nlohmann::json& run_info) const;
  // What the resume guard decides on (resume_guard.h), read from the directory.
  ResumeFacts resume_facts(bool has_ledger, const std::optional<Ledger>& ledger, std::int64_t ledger_steps,
                           std::int64_t checkpoint_step, bool secrets_kept) const;

  RunPaths paths_;
  RunBinding binding_;
};

// Writes `text` to `path` atomically (temporary file renamed into place).
void write_text_file(const std::filesystem::path& path, const std::string& text);
std::string read_text_file(const std::filesystem::path& path);

// The first line where two config texts differ, as "'a' in the run vs 'b' now" ("" if none).
std::string first_config_difference(const std::string& bound, const std::string& now);

}  // namespace dpgnn::train
