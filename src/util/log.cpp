#include "dpgnn/util/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace dpgnn {
namespace {
AbortHandler g_abort_handler = nullptr;
FinalizeHandler g_finalize_handler = nullptr;

spdlog::level::level_enum level_from_env() {
  const char* v = std::getenv("DPGNN_LOG_LEVEL");
  if (v == nullptr || *v == '\0') return spdlog::level::info;
  return spdlog::level::from_str(v);
}
}  // namespace

void init_logging() {
  auto logger = spdlog::stderr_color_mt("dpgnn");
  logger->set_pattern("[%H:%M:%S] %^%l%$ %v");
  logger->set_level(level_from_env());
  spdlog::set_default_logger(logger);
}

void set_logging_rank(int rank, int world_size) {
  auto logger = spdlog::default_logger();
  if (world_size > 1) logger->set_pattern("[%H:%M:%S] [rank " + std::to_string(rank) + "] %^%l%$ %v");
  const char* all = std::getenv("DPGNN_LOG_ALL_RANKS");
  const bool all_ranks = all != nullptr && std::strcmp(all, "1") == 0;
  if (rank != 0 && !all_ranks) logger->set_level(spdlog::level::warn);
}

void set_abort_handler(AbortHandler handler) { g_abort_handler = handler; }

void abort_peers_on_error(int exit_code) {
  if (exit_code != 0 && g_abort_handler != nullptr) g_abort_handler(exit_code);
}

void set_finalize_handler(FinalizeHandler handler) { g_finalize_handler = handler; }

void finalize_peers() {
  if (g_finalize_handler != nullptr) g_finalize_handler();
}

bool progress_enabled() {
  const char* v = std::getenv("DPGNN_PROGRESS");
  if (v != nullptr) return std::strcmp(v, "1") == 0;
  return isatty(STDERR_FILENO) == 1;
}

Progress::Progress(std::string what, std::int64_t total, std::string unit)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      last_(start_),
      enabled_(progress_enabled()) {}

void Progress::update(std::int64_t done) {
  done_ = done;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_).count() < 2.0) return;
  last_ = now;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? static_cast<double>(done) / secs : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : 0.0;
  spdlog::info("{}: {}/{} ({:.1f}%) {:.3g} {}/s, ETA {:.0f} s", what_, done, total_,
               total_ > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0,
               rate, unit_, eta);
}

void Progress::finish() {
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  spdlog::info("{}: {} {} in {:.2f} s ({:.3g} {}/s)", what_, total_, unit_, secs,
               secs > 0 ? static_cast<double>(total_) / secs : 0.0, unit_);
}

}  // namespace dpgnn
