// The privacy ledger: one JSON line per private step, appended and flushed to disk (fsync)
// BEFORE the step's noisy gradient is used (DESIGN.md decision 8). A crash can therefore
// lose a step's work but never its privacy cost: resume rebuilds the accountant from every
// line of the ledger, including steps taken after the last checkpoint.
//
// Two kinds of lines:
//  * training (sgd) steps, one line each, numbered 1, 2, 3, ... (format 3: the same numbers
//    as metrics.jsonl, the progress lines and checkpoints, the count of steps taken once the
//    step is done; formats 1 and 2 numbered them 0, 1, 2, ..., and a ledger keeps the
//    numbering of its header when a resume appends to it):
//      {"step": 17, "mechanism": "wor n=120 m=60 z=1.25", "scheme": "wor",
//       "sampling_rate": 0.5, "noise_multiplier": 1.25, "subgraphs": 120, "batch_size": 60,
//       "epsilon": 0.83}
//  * pre-training releases (DPAR's DP-APPR matrix: the Gumbel top-K selections and Laplace
//    values released once before training), one line per kind of event, with the number of
//    identical events and no step:
//      {"release": "dp-appr", "mechanism": "exponential z=20", "count": 4000,
//       "scheme": "exponential", "noise_multiplier": 20, "epsilon": 0.51}
//    Release lines may appear only before the first sgd line.
//  * the run's hidden sample (DPAR's graph sampling at rate q'), at most one line, first:
//      {"release": "graph-sample", "subsample": "subsample n=14666 m=1320", "rate": 0.09,
//       "count": 1, "epsilon": 0}
//    Every epsilon of the run is then amplified by it (privacy/subsample.h).
//  * (format 2) a header, first: {"ledger": "dpgnn", "version": 3, "binding": {...}}: what the
//    run is bound to (train/run_binding.h: the effective config and its digest, ranks,
//    device, data checksums, dpgnn version, secret fingerprints). A resume checks itself
//    against it, not against the editable config.yaml.
//  * (format 2) a release record, ONE line per release, written (fsync) before the release
//    is used: {"release": "dp-appr", "events": [{"mechanism": "...", "count": 70}, ...],
//    "subsample": "subsample n=.. m=.." (optional), "file": "releases/dp-appr.json",
//    "digest": "blake2b:...", "epsilon": ...}. One line is one write: a crash leaves either
//    the whole record or a torn line, which is refused. read_ledger expands it into the
//    entries above (a graph-sample entry, then one entry per event).
//  * (format 2) a resume segment, appended by every resume before its first step:
//    {"resume": {"after_step": 100, "ranks": 4, "device": "cpu", "version": "0.3.0", ...}}:
//    the steps after it were taken on that set-up (a replay must match it).
//  * (format 2) the end, last: {"end": {"steps": 83, "stopped_by": "target_epsilon", ...}}.
// `mechanism` is privacy::Mechanism's exact text form (doubles with 17 digits), from which
// the accountant is rebuilt bit for bit; the other fields are for people and plots. A line
// without "release" is an sgd line and one without "count" counts 1, so ledgers written
// before releases existed read unchanged.
#pragma once

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dpgnn/privacy/accountant.h"

namespace dpgnn::train {

// The `release` name of a training step.
inline constexpr const char* kSgdRelease = "sgd";
// The `release` name of the run's hidden sample.
inline constexpr const char* kGraphSampleRelease = "graph-sample";

struct LedgerEntry {
  std::int64_t step = 0;  // sgd: the step's 0-based index (the file holds step + 1 from format 3); releases: 0
  privacy::Mechanism mechanism;
  double epsilon = 0.0;   // spent after this entry (at the run's delta)
  // The number of identical events this line records (Accountant::step(mechanism, count));
  // always 1 for an sgd line, >= 1 for a release.
  std::int64_t count = 1;
  // "sgd" for a training step; any other non-empty name (e.g. "dp-appr") for a pre-training
  // release.
  std::string release = kSgdRelease;
  // Set on the "graph-sample" line only (which has no mechanism).
  std::optional<privacy::Subsample> subsample;

  bool is_sgd() const { return release == kSgdRelease; }
};

// 3: sgd lines numbered from 1 (issue 25); 2: the header, release records, segments and end,
// sgd lines numbered from 0. Both are read.
inline constexpr int kLedgerFormat = 3;

// A pre-training release as one ledger record (see above).
struct ReleaseRecord {
  std::string name;                               // e.g. "dp-appr"
  std::vector<privacy::AccountantEvent> events;   // its privacy cost
  std::optional<privacy::Subsample> subsample;    // the run's hidden sample, when it has one
  std::string file;                               // the stored release, relative to the run directory
  std::string digest;                             // util/digest.h blake2b_digest of the file's bytes
  // The fingerprint of the batch secret the release (and a hidden sample) was keyed with: a
  // resume must hold that secret to rebuild the hidden sample.
  std::string key_fingerprint;
  double epsilon = 0.0;                           // spent after it
};

// A ledger as read: the header's binding (absent in format-1 ledgers), the entries (sgd steps
// and the expanded releases, in order), the release records, the resume segments, the end.
struct Ledger {
  int format = 1;  // the header's version (1: no header)
  std::optional<nlohmann::json> binding;
  std::vector<LedgerEntry> entries;
  std::vector<ReleaseRecord> releases;
  std::vector<nlohmann::json> segments;  // each with "after_step"
  std::optional<nlohmann::json> end;
};

class LedgerWriter {
 public:
  // Opens `path` for appending (creating it). Step lines follow the numbering of the file's
  // header (from 1 under format 3, from 0 before it or without a header); append_header
  // starts a format-3 ledger.
  explicit LedgerWriter(const std::string& path);
  ~LedgerWriter();
  LedgerWriter(const LedgerWriter&) = delete;
  LedgerWriter& operator=(const LedgerWriter&) = delete;
  // Appends one line and makes it durable (fflush + fsync) before returning. Throws
  // std::invalid_argument for an entry read_ledger would refuse on its own (an sgd line with
  // count != 1, a release with count < 1 or an empty name); the order of lines is the
  // caller's (read_ledger checks it).
  void append(const LedgerEntry& entry);
  // The format-2 records (see above), each one line, durable before returning.
  void append_header(const nlohmann::json& binding);
  void append_release(const ReleaseRecord& record);
  void append_segment(const nlohmann::json& segment);
  void append_end(const nlohmann::json& end);

 private:
  void write_line(const nlohmann::json& j);
  std::string path_;
  std::FILE* file_ = nullptr;
  std::int64_t first_step_number_ = 0;  // what the file calls the step of index 0
};

// Reads every entry; DataError naming the file and line for a malformed line, a release
// line after the first sgd line, or an sgd line whose step is not its index among the sgd
// lines. A torn last line (a crash while writing) is an error too: the step may have been
// used.
std::vector<LedgerEntry> read_ledger(const std::string& path);
// The whole ledger (header, records, segments, end), checked the same way; also DataError for
// a header that is not first, an unknown format version, or anything after the end.
Ledger read_ledger_file(const std::string& path);

// The number of training steps the ledger records (its sgd lines; releases not counted).
std::int64_t sgd_steps(const std::vector<LedgerEntry>& entries);

// An accountant holding exactly the ledger's events: every entry, releases included, stepped
// with its count (`orders` empty = privacy::default_orders()).
privacy::Accountant accountant_from_ledger(const std::vector<LedgerEntry>& entries,
                                           privacy::Conversion conversion, std::vector<double> orders = {});

}  // namespace dpgnn::train
