// Calibration: the noise multiplier or the number of steps that meets a privacy target.
//
// Both are bisections on functions that are monotone in theory — epsilon decreases in the
// noise multiplier and increases in the number of steps. The monotonicity is checked at
// every evaluated point (a violation means a numerical bug, and is thrown as
// std::logic_error rather than silently returning a wrong noise level), and the answer
// is always on the safe side: epsilon(returned value) <= target.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "dpgnn/privacy/accountant.h"
#include "dpgnn/privacy/conversion.h"
#include "dpgnn/privacy/mechanism.h"

namespace dpgnn::privacy {

struct CalibrationOptions {
  // kPld: epsilon is min(PLD, RDP) where every event has a PLD and no prior_rdp is given
  // (pld_accountant.h), RDP otherwise. The default stays kRdp for existing callers; dpgnn's
  // configs and `dpgnn privacy` default to pld.
  AccountantKind accountant = AccountantKind::kRdp;
  std::vector<double> orders;                  // empty = default_orders()
  Conversion conversion = Conversion::kBalle;
  double min_noise_multiplier = 1e-2;          // search bracket for the noise multiplier
  double max_noise_multiplier = 1e6;
  double relative_tolerance = 1e-7;            // stop when hi/lo - 1 < this
  // RDP already spent, per order of `orders` (empty = nothing): the calibrated events are
  // composed after it (Mironov 2017, Proposition 1), as when DPAR's DP-SGD follows its
  // DP-APPR release.
  std::vector<double> prior_rdp;
  // The whole run on a hidden uniform sample (subsample.h): the target is met by the
  // amplified epsilon, as the accountant reports it.
  std::optional<Subsample> subsample;
};

struct NoiseCalibration {
  double noise_multiplier = 0.0;  // the smallest found z with epsilon(z) <= target
  double epsilon = 0.0;           // epsilon at that z (<= target)
  double order = 0.0;             // the minimising order there
  bool pld = false;               // epsilon came from a privacy loss distribution
};

// The smallest noise multiplier z such that `steps` steps of `sampling` (its own noise
// multiplier is ignored) give epsilon(delta) <= target_epsilon, to relative_tolerance (if
// even min_noise_multiplier meets the target, min_noise_multiplier is returned). Throws
// std::invalid_argument if target_epsilon <= 0, steps < 1, delta outside (0,1), or the
// target is unreachable even at max_noise_multiplier (too small for these steps/orders).
NoiseCalibration calibrate_noise_multiplier(const Mechanism& sampling, std::int64_t steps,
                                            double target_epsilon, double delta,
                                            const CalibrationOptions& options = {});

// The smallest scale z such that the events events_at(z) (a release whose every mechanism
// is built from z, its privacy decreasing in z), composed after options.prior_rdp, give
// epsilon(delta) <= target_epsilon. The same checked bisection and errors as above;
// calibrate_noise_multiplier is this with events_at(z) = {steps x sampling with z}.
NoiseCalibration calibrate_events(const std::function<std::vector<AccountantEvent>(double)>& events_at,
                                  double target_epsilon, double delta, const CalibrationOptions& options = {});

// RDP per order of `events` (each mechanism's per-step RDP times its count, summed).
std::vector<double> events_rdp(const std::vector<AccountantEvent>& events, const std::vector<double>& orders);

struct StepsCalibration {
  std::int64_t steps = 0;  // the largest T with epsilon(T) <= target (0 if even one exceeds)
  double epsilon = 0.0;    // epsilon after `steps` steps (0 if steps == 0)
  double order = 0.0;
  bool pld = false;        // epsilon came from a privacy loss distribution
};

// The largest number of steps of `mechanism` keeping epsilon(delta) <= target_epsilon,
// searched up to max_steps (returned if even that many fit), by the given accountant.
StepsCalibration calibrate_steps(const Mechanism& mechanism, double target_epsilon, double delta,
                                 std::int64_t max_steps = std::int64_t{1} << 40,
                                 const std::vector<double>& orders = {},
                                 Conversion conversion = Conversion::kBalle,
                                 AccountantKind accountant = AccountantKind::kRdp);

}  // namespace dpgnn::privacy
