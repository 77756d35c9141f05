// Noise and step calibration by checked bisection (see calibration.h).
//
// epsilon(z) is non-increasing in the noise multiplier z and epsilon(T) non-decreasing in
// the number of steps T for every accountant here (each per-step RDP bound decreases in z;
// composition multiplies it by T; the conversions are increasing in RDP). Bisection keeps
// the invariant epsilon(bad end) > target >= epsilon(good end) and checks at every
// evaluation that the new value lies between the values at the bracket's ends; a violation
// is a numerical bug and is reported (std::logic_error) instead of returning an unsafe noise
// level. The returned value is always the good end: epsilon(result) <= target.
#include "dpgnn/privacy/calibration.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/pld_accountant.h"
#include "dpgnn/privacy/rdp.h"

namespace dpgnn::privacy {

namespace {

std::string fmt(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

void check_target(double target_epsilon) {
  if (!std::isfinite(target_epsilon) || !(target_epsilon > 0.0))
    throw std::invalid_argument("target epsilon must be a finite number > 0, got " +
                                fmt(target_epsilon));
}

// Relative slack for the monotonicity check: RDP values are exact up to rounding; a PLD
// value moves with its grid (cell boundaries and window shift with z or T), by far less than
// 1e-6 relative.
double slack_of(AccountantKind kind) { return kind == AccountantKind::kPld ? 1e-6 : 1e-12; }

bool between(double v, double upper, double lower, double rel = 1e-12) {
  const double slack = rel * std::max(1.0, std::fabs(upper));
  return v <= upper + slack && v >= lower - slack;
}

// min(PLD, RDP) for kPld where a PLD applies, else the RDP value.
EpsilonAtOrder with_pld(AccountantKind kind, const std::vector<AccountantEvent>& events, double delta,
                        const std::optional<Subsample>& subsample, EpsilonAtOrder rdp) {
  if (kind != AccountantKind::kPld) return rdp;
  const std::optional<double> p = pld_epsilon_of_run(events, delta, subsample);
  if (p && *p < rdp.epsilon) return {*p, 0.0, true};
  return rdp;
}

}  // namespace

std::vector<double> events_rdp(const std::vector<AccountantEvent>& events, const std::vector<double>& orders) {
  std::vector<double> total(orders.size(), 0.0);
  for (const auto& e : events) {
    if (e.count < 1) throw std::invalid_argument("an event's count must be >= 1, got " + std::to_string(e.count));
    const std::vector<double> r = rdp_per_step(e.mechanism, orders);
    for (std::size_t i = 0; i < r.size(); ++i) total[i] += r[i] * static_cast<double>(e.count);
  }
  return total;
}

NoiseCalibration calibrate_noise_multiplier(const Mechanism& sampling, std::int64_t steps,
                                            double target_epsilon, double delta,
                                            const CalibrationOptions& options) {
  if (steps < 1) throw std::invalid_argument("steps must be >= 1, got " + std::to_string(steps));
  return calibrate_events(
      [&](double z) { return std::vector<AccountantEvent>{{sampling.with_noise_multiplier(z), steps}}; },
      target_epsilon, delta, options);
}

NoiseCalibration calibrate_events(const std::function<std::vector<AccountantEvent>(double)>& events_at,
                                  double target_epsilon, double delta, const CalibrationOptions& options) {
  check_target(target_epsilon);
  validate_delta(delta);
  const std::vector<double> orders = options.orders.empty() ? default_orders() : options.orders;
  validate_orders(orders);
  const double z_min = options.min_noise_multiplier, z_max = options.max_noise_multiplier;
  if (!(z_min > 0.0) || !(z_max > z_min) || !std::isfinite(z_max))
    throw std::invalid_argument("calibration bracket must satisfy 0 < min_noise_multiplier < "
                                "max_noise_multiplier < inf");
  if (!(options.relative_tolerance > 0.0))
    throw std::invalid_argument("calibration relative_tolerance must be > 0");

  if (!options.prior_rdp.empty() && options.prior_rdp.size() != orders.size())
    throw std::invalid_argument("calibration prior_rdp has " + std::to_string(options.prior_rdp.size()) +
                                " values for " + std::to_string(orders.size()) + " orders");
  auto evaluate = [&](double z) {
    const std::vector<AccountantEvent> events = events_at(z);
    std::vector<double> rdp = events_rdp(events, orders);
    for (std::size_t i = 0; i < options.prior_rdp.size(); ++i) rdp[i] += options.prior_rdp[i];
    const EpsilonAtOrder e = epsilon_of_run(orders, rdp, delta, options.conversion, options.subsample);
    // RDP already spent cannot enter a PLD: then RDP alone.
    if (!options.prior_rdp.empty()) return e;
    return with_pld(options.accountant, events, delta, options.subsample, e);
  };
  const double rel = slack_of(options.accountant);

  // Bracket: lo with epsilon > target (too little noise), hi with epsilon <= target. kPld
  // starts from the RDP answer (cheap): min(PLD, RDP) <= RDP fits there, and the PLD answer
  // is usually within a factor 2 below it.
  double start = std::min(std::max(1.0, z_min), z_max);
  if (options.accountant == AccountantKind::kPld && options.prior_rdp.empty()) {
    CalibrationOptions rdp_options = options;
    rdp_options.accountant = AccountantKind::kRdp;
    rdp_options.relative_tolerance = std::max(options.relative_tolerance, 1e-3);
    start = calibrate_events(events_at, target_epsilon, delta, rdp_options).noise_multiplier;
  }
  double hi = start;
  EpsilonAtOrder e_hi = evaluate(hi);
  double lo = hi;
  EpsilonAtOrder e_lo = e_hi;
  if (e_hi.epsilon <= target_epsilon) {
    // Move down until the target is exceeded (or the bracket's bottom is reached).
    while (e_lo.epsilon <= target_epsilon) {
      hi = lo;
      e_hi = e_lo;
      if (lo <= z_min) return {hi, e_hi.epsilon, e_hi.order, e_hi.pld};  // fits even at z_min
      lo = std::max(z_min, lo / 2.0);
      e_lo = evaluate(lo);
      if (e_lo.epsilon < e_hi.epsilon - rel * e_hi.epsilon)
        throw std::logic_error("calibration: epsilon increased with the noise multiplier (" +
                               fmt(lo) + " -> " + fmt(e_lo.epsilon) + ", " + fmt(hi) + " -> " +
                               fmt(e_hi.epsilon) + ")");
    }
  } else {
    while (e_hi.epsilon > target_epsilon) {
      lo = hi;
      e_lo = e_hi;
      if (hi >= z_max)
        throw std::invalid_argument(
            "target epsilon " + fmt(target_epsilon) + " at delta " + fmt(delta) +
            " is unreachable: even noise_multiplier " + fmt(z_max) +
            " gives epsilon " + fmt(e_hi.epsilon) +
            " (the target is too small for this many steps, the budget already spent, and these Rényi orders)");
      hi = std::min(z_max, hi * 2.0);
      e_hi = evaluate(hi);
      if (e_hi.epsilon > e_lo.epsilon + rel * e_lo.epsilon)
        throw std::logic_error("calibration: epsilon increased with the noise multiplier (" +
                               fmt(lo) + " -> " + fmt(e_lo.epsilon) + ", " + fmt(hi) + " -> " +
                               fmt(e_hi.epsilon) + ")");
    }
  }
  // Bisection in log scale on [lo, hi]. A PLD evaluation costs up to a second, so kPld
  // proposes the false-position point of ln epsilon against ln z instead (Illinois variant:
  // the retained end's value is halved when the same end is kept twice, Dowell & Jarratt
  // 1971), every third step a plain bisection so that the bracket always shrinks; the
  // checks and the invariant are the same either way.
  const bool secant = options.accountant == AccountantKind::kPld;
  double g_lo = 0.0, g_hi = 0.0;  // ln eps - ln target at the ends (Illinois-scaled)
  int kept = 0, iteration = 0;    // +1: lo was kept last time, -1: hi was kept
  if (secant) {
    g_lo = std::log(e_lo.epsilon / target_epsilon);
    g_hi = std::log(e_hi.epsilon / target_epsilon);
  }
  while (hi / lo - 1.0 > options.relative_tolerance) {
    double mid = std::sqrt(lo * hi);
    if (secant && ++iteration % 3 != 0 && std::isfinite(g_lo) && std::isfinite(g_hi) && g_lo > g_hi) {
      const double x = (std::log(lo) * g_hi - std::log(hi) * g_lo) / (g_hi - g_lo);
      const double candidate = std::exp(x);
      if (candidate > lo && candidate < hi) mid = candidate;
    }
    if (!(mid > lo && mid < hi)) break;  // no double strictly between
    const EpsilonAtOrder e_mid = evaluate(mid);
    if (!between(e_mid.epsilon, e_lo.epsilon, e_hi.epsilon, rel))
      throw std::logic_error("calibration: epsilon is not monotone in the noise multiplier at " +
                             fmt(mid) + " (epsilon " + fmt(e_mid.epsilon) + " outside [" +
                             fmt(e_hi.epsilon) + ", " + fmt(e_lo.epsilon) + "])");
    const double g_mid = secant ? std::log(e_mid.epsilon / target_epsilon) : 0.0;
    if (e_mid.epsilon > target_epsilon) {
      lo = mid;
      e_lo = e_mid;
      g_lo = g_mid;
      if (kept == -1) g_hi /= 2.0;
      kept = -1;
    } else {
      hi = mid;
      e_hi = e_mid;
      g_hi = g_mid;
      if (kept == 1) g_lo /= 2.0;
      kept = 1;
    }
  }
  return {hi, e_hi.epsilon, e_hi.order, e_hi.pld};
}

StepsCalibration calibrate_steps(const Mechanism& mechanism, double target_epsilon, double delta,
                                 std::int64_t max_steps, const std::vector<double>& orders_in,
                                 Conversion conversion, AccountantKind accountant) {
  check_target(target_epsilon);
  validate_delta(delta);
  if (max_steps < 1)
    throw std::invalid_argument("max_steps must be >= 1, got " + std::to_string(max_steps));
  const std::vector<double> orders = orders_in.empty() ? default_orders() : orders_in;
  const std::vector<double> per_step = rdp_per_step(mechanism, orders);
  auto evaluate = [&](std::int64_t steps) {
    std::vector<double> rdp = per_step;
    for (double& r : rdp) r *= static_cast<double>(steps);
    return with_pld(accountant, {{mechanism, steps}}, delta, std::nullopt,
                    epsilon_from_rdp(orders, rdp, delta, conversion));
  };
  const double rel = slack_of(accountant);
  // good: epsilon(good) <= target (0 steps spend nothing); bad: epsilon(bad) > target.
  std::int64_t good = 0;
  EpsilonAtOrder e_good{0.0, 0.0};
  std::int64_t bad = 1;
  if (accountant == AccountantKind::kPld) {
    // min(PLD, RDP) <= RDP: the RDP count (cheap) fits, so the search starts there.
    const StepsCalibration r = calibrate_steps(mechanism, target_epsilon, delta, max_steps, orders, conversion,
                                               AccountantKind::kRdp);
    if (r.steps >= max_steps) return r;
    if (r.steps > 0) {
      good = r.steps;
      e_good = evaluate(good);
      bad = good > max_steps / 2 ? max_steps : good * 2;
    }
  }
  EpsilonAtOrder e_bad = evaluate(bad);
  while (e_bad.epsilon <= target_epsilon) {
    if (e_bad.epsilon < e_good.epsilon - rel * e_good.epsilon)
      throw std::logic_error("calibrate_steps: epsilon decreased with more steps");
    good = bad;
    e_good = e_bad;
    if (bad >= max_steps) return {good, e_good.epsilon, e_good.order, e_good.pld};
    bad = bad > max_steps / 2 ? max_steps : bad * 2;
    e_bad = evaluate(bad);
  }
  while (bad - good > 1) {
    const std::int64_t mid = good + (bad - good) / 2;
    const EpsilonAtOrder e_mid = evaluate(mid);
    if (!between(e_mid.epsilon, e_bad.epsilon, e_good.epsilon, rel))
      throw std::logic_error("calibrate_steps: epsilon is not monotone in the number of steps at " +
                             std::to_string(mid));
    if (e_mid.epsilon > target_epsilon) {
      bad = mid;
      e_bad = e_mid;
    } else {
      good = mid;
      e_good = e_mid;
    }
  }
  return {good, e_good.epsilon, e_good.order, e_good.pld};
}

}  // namespace dpgnn::privacy
