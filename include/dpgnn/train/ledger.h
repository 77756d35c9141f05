// The privacy ledger: one JSON line per private step, appended and flushed to disk (fsync)
// BEFORE the step's noisy gradient is used (DESIGN.md decision 8). A crash can therefore
// lose a step's work but never its privacy cost: resume rebuilds the accountant from every
// line of the ledger, including steps taken after the last checkpoint.
//
//   {"step": 17, "mechanism": "wor n=120 m=60 z=1.25", "scheme": "wor",
//    "sampling_rate": 0.5, "noise_multiplier": 1.25, "subgraphs": 120, "batch_size": 60,
//    "epsilon": 0.83}
// `mechanism` is privacy::Mechanism's exact text form (doubles with 17 digits), from which
// the accountant is rebuilt bit for bit; the other fields are for people and plots.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "dpgnn/privacy/accountant.h"

namespace dpgnn::train {

struct LedgerEntry {
  std::int64_t step = 0;
  privacy::Mechanism mechanism;
  double epsilon = 0.0;  // spent after this step (at the run's delta)
};

class LedgerWriter {
 public:
  // Opens `path` for appending (creating it).
  explicit LedgerWriter(const std::string& path);
  ~LedgerWriter();
  LedgerWriter(const LedgerWriter&) = delete;
  LedgerWriter& operator=(const LedgerWriter&) = delete;
  // Appends one line and makes it durable (fflush + fsync) before returning.
  void append(const LedgerEntry& entry);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

// Reads every entry; DataError naming the file and line for a malformed line. A torn last
// line (a crash while writing) is an error too: the step may have been used.
std::vector<LedgerEntry> read_ledger(const std::string& path);

// An accountant holding exactly the ledger's steps.
privacy::Accountant accountant_from_ledger(const std::vector<LedgerEntry>& entries,
                                           privacy::Conversion conversion);

}  // namespace dpgnn::train
