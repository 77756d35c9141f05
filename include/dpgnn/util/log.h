// Logging set-up (spdlog) and a progress line for long work.
//
// Messages go to stderr; in an MPI job only rank 0 prints info-level messages unless
// DPGNN_LOG_ALL_RANKS=1, and every line carries the rank. Progress lines (ETA, rates)
// are printed only when stderr is a terminal or DPGNN_PROGRESS=1, so logs stay quiet
// in batch jobs.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace dpgnn {

// Default set-up for a single process. Level from DPGNN_LOG_LEVEL (trace..off), default info.
void init_logging();
// Re-configure once the rank is known: prefix with the rank, quiet non-zero ranks.
void set_logging_rank(int rank, int world_size);

// Called by main() after an error: when a handler was installed (by dist/ once MPI is
// up), it aborts the whole job so that the other ranks do not wait forever.
using AbortHandler = void (*)(int exit_code);
void set_abort_handler(AbortHandler handler);
void abort_peers_on_error(int exit_code);
// For errors every rank raised (CollectiveError): shut the job down cleanly instead
// (dist/ installs MPI_Finalize here). Idempotent.
using FinalizeHandler = void (*)();
void set_finalize_handler(FinalizeHandler handler);
void finalize_peers();

// Periodic progress for a long loop: "what: done/total (pct) rate unit/s ETA".
class Progress {
 public:
  Progress(std::string what, std::int64_t total, std::string unit = "items");
  // Reports at most every `interval` seconds (and only on a terminal / DPGNN_PROGRESS=1).
  void update(std::int64_t done);
  // Always logs one final line at info level.
  void finish();

 private:
  std::string what_, unit_;
  std::int64_t total_, done_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
  bool enabled_;
};

bool progress_enabled();

}  // namespace dpgnn
