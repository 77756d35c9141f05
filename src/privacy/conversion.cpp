// RDP -> (epsilon, delta) conversions, minimised over orders (sources in conversion.h):
//   Balle et al. 2020 (AISTATS, "Hypothesis testing interpretations and Rényi differential
//   privacy", Theorem 21; = Canonne, Kamath & Steinke 2020, arXiv 2004.00010, Prop. 12):
//     eps = r + ln(1 - 1/a) - (ln delta + ln a)/(a - 1),
//     ln delta = (a - 1)(r - eps + ln(1 - 1/a)) - ln a;
//   Mironov 2017 (Proposition 3): eps = r + ln(1/delta)/(a - 1), ln delta = (a - 1)(r - eps);
//   and the Bretagnolle-Huber total-variation bound delta <= sqrt(1 - e^{-r}) at eps = 0.
#include "dpgnn/privacy/conversion.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "dpgnn/privacy/orders.h"
#include "format.h"

namespace dpgnn::privacy {

namespace {

void check_curve(const std::vector<double>& orders, const std::vector<double>& rdp) {
  validate_orders(orders);
  if (orders.size() != rdp.size())
    throw std::invalid_argument("RDP curve has " + std::to_string(rdp.size()) +
                                " values for " + std::to_string(orders.size()) + " orders");
  for (double r : rdp)
    if (std::isnan(r) || r < 0.0)
      throw std::invalid_argument("RDP values must be >= 0 and not NaN, got " + detail::format_double(r));
}

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

std::string conversion_name(Conversion c) {
  return c == Conversion::kBalle ? "balle" : "mironov";
}

Conversion parse_conversion(const std::string& name) {
  if (name == "balle") return Conversion::kBalle;
  if (name == "mironov") return Conversion::kMironov;
  throw std::invalid_argument("conversion must be 'balle' or 'mironov', got '" + name + "'");
}

void validate_delta(double delta) {
  if (!std::isfinite(delta) || !(delta > 0.0) || !(delta < 1.0))
    throw std::invalid_argument("delta must be in (0, 1), got " + detail::format_double(delta));
}

EpsilonAtOrder epsilon_from_rdp(const std::vector<double>& orders, const std::vector<double>& rdp,
                                double delta, Conversion conversion) {
  check_curve(orders, rdp);
  validate_delta(delta);
  const double log_delta = std::log(delta);
  EpsilonAtOrder best{kInf, orders.front()};
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i], r = rdp[i];
    double eps;
    if (delta * delta + std::expm1(-r) > 0.0) {
      eps = 0.0;  // delta >= sqrt(1 - e^{-KL}) >= TV: (0, delta)-DP already
    } else if (conversion == Conversion::kBalle) {
      eps = r + std::log1p(-1.0 / a) - (log_delta + std::log(a)) / (a - 1.0);
    } else {
      eps = r - log_delta / (a - 1.0);
    }
    if (eps < best.epsilon) best = {eps, a};
  }
  if (!std::isfinite(best.epsilon))
    throw std::invalid_argument("epsilon is infinite at every order (RDP overflow)");
  best.epsilon = std::max(0.0, best.epsilon);
  return best;
}

DeltaAtOrder delta_from_rdp(const std::vector<double>& orders, const std::vector<double>& rdp,
                            double epsilon, Conversion conversion) {
  check_curve(orders, rdp);
  if (!std::isfinite(epsilon) || epsilon < 0.0)
    throw std::invalid_argument("epsilon must be a finite number >= 0, got " +
                                detail::format_double(epsilon));
  DeltaAtOrder best{kInf, orders.front()};
  double best_log = kInf;
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i], r = rdp[i];
    // Total-variation bound (valid at any epsilon >= 0).
    double log_delta = r == 0.0 ? -kInf : 0.5 * std::log(-std::expm1(-r));
    const double rdp_bound = conversion == Conversion::kBalle
                                 ? (a - 1.0) * (r - epsilon + std::log1p(-1.0 / a)) - std::log(a)
                                 : (a - 1.0) * (r - epsilon);
    log_delta = std::min(log_delta, rdp_bound);
    if (log_delta < best_log) {
      best_log = log_delta;
      best.order = a;
    }
  }
  best.delta = std::min(1.0, std::exp(best_log));
  return best;
}

}  // namespace dpgnn::privacy
