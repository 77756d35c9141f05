#include "stop_signals.h"

#include <csignal>
#include <mutex>

namespace dpgnn::train {
namespace {
volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_old_int, g_old_term;
// In-process ranks (tests: one thread per rank) share one installation.
std::mutex g_mutex;
int g_installs = 0;
extern "C" void on_stop_signal(int sig) { g_signal = sig; }
}  // namespace

StopSignals::StopSignals() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_installs++ > 0) return;
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignals::~StopSignals() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (--g_installs > 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int StopSignals::received() { return static_cast<int>(g_signal); }

}  // namespace dpgnn::train
