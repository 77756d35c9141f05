// The PLD accountant's cost (privacy/pld_accountant.h): epsilon of T steps of `wor`, the noise
// calibration (bisection over z), and the per-step would_exceed once the budget is cached,
// with peak resident memory. One thread (privacy/ is single-threaded).
//   build/bench/bench_pld [--steps 100000] [--n 60000] [--m 256] [--z 1.1] [--delta 1e-5] [--target 8]
// Results: docs/benchmarks.md.
#include <sys/resource.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dpgnn/privacy/accountant.h"
#include "dpgnn/privacy/calibration.h"
#include "dpgnn/privacy/pld_accountant.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds of this process (wall time on a shared machine overstates the cost).
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

long peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;  // kB on Linux
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t steps = 100000, n = 60000, m = 256;
  double z = 1.1, delta = 1e-5, target = 8.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--steps")) steps = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--n")) n = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--m")) m = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--z")) z = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--delta")) delta = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--target")) target = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_pld [--steps T] [--n N] [--m M] [--z Z] [--delta D] [--target EPS]\n");
      return 2;
    }
  }
  using namespace dpgnn::privacy;
  const Mechanism mech = Mechanism::wor(n, m, z);

  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpu_seconds();
  const double eps = pld_epsilon({{mech, steps}}, delta);
  const double t_eps = seconds_since(t0);
  std::printf("epsilon  wor n=%lld m=%lld z=%g T=%lld delta=%g: %.6f in %.3f s wall, %.3f s CPU (peak RSS %ld MB)\n",
              static_cast<long long>(n), static_cast<long long>(m), z, static_cast<long long>(steps), delta, eps,
              t_eps, cpu_seconds() - c0, peak_rss_mb());

  CalibrationOptions opt;
  opt.accountant = AccountantKind::kPld;
  t0 = std::chrono::steady_clock::now();
  c0 = cpu_seconds();
  const NoiseCalibration c = calibrate_noise_multiplier(mech, steps, target, delta, opt);
  std::printf("calibrate z for epsilon %g over T=%lld: z = %.7f (epsilon %.6f) in %.3f s wall, %.3f s CPU (peak RSS %ld MB)\n",
              target, static_cast<long long>(steps), c.noise_multiplier, c.epsilon, seconds_since(t0),
              cpu_seconds() - c0, peak_rss_mb());

  // would_exceed where RDP alone no longer fits (the PLD budget is needed): after the RDP
  // budget of steps.
  const StepsCalibration rdp_budget = calibrate_steps(mech, target, delta);
  Accountant acc(AccountantKind::kPld);
  acc.step(mech, rdp_budget.steps + 1);
  t0 = std::chrono::steady_clock::now();
  c0 = cpu_seconds();
  (void)acc.would_exceed(target, delta, mech);
  const double t_first = seconds_since(t0), c_first = cpu_seconds() - c0;
  t0 = std::chrono::steady_clock::now();
  const int calls = 10000;
  int exceeded = 0;
  for (int i = 0; i < calls; ++i) exceeded += acc.would_exceed(target, delta, mech) ? 1 : 0;
  std::printf("would_exceed after %lld steps (past the RDP budget): first call (finds the PLD step budget) %.3f s wall, "
              "%.3f s CPU, then %.2f us per call (%d of %d exceeded)\n",
              static_cast<long long>(rdp_budget.steps + 1), t_first, c_first, 1e6 * seconds_since(t0) / calls, exceeded, calls);
  return 0;
}
