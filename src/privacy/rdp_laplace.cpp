// Rényi DP of the Laplace mechanism on one coordinate: Mironov 2017, "Rényi Differential
// Privacy", Proposition 6 (Table II, Laplace row). For Lap(0, b) versus Lap(Delta, b) with
// z = b / Delta (noise_convention.h) and alpha > 1:
//   eps(alpha) = 1/(alpha-1) ln( alpha/(2alpha-1) e^{(alpha-1)/z}
//                                + (alpha-1)/(2alpha-1) e^{-alpha/z} ),
// and eps(infinity) = 1/z (the pure-DP bound of Dwork, McSherry, Nissim & Smith 2006).
//
// Numerics. Write w = alpha/(2alpha-1), v = 1 - w = (alpha-1)/(2alpha-1), x = (alpha-1)/z,
// y = alpha/z. Then w x = v y exactly, so the argument of the logarithm is
//   1 + w (e^x - 1 - x) + v (e^{-y} - 1 + y)        (both added terms >= 0),
// which keeps full relative precision when the RDP is tiny (large z: the naive sum would
// lose the 1/z first-order terms to cancellation) and as alpha -> 1 (the value tends to the
// KL divergence 1/z + e^{-1/z} - 1 instead of 0/0). For x > 1 the exponent is large and the
// log-sum-exp form ln w + x + ln(1 + (v/w) e^{-(x+y)}) cannot overflow (alpha up to 1e6,
// z down to 1e-300).
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"
#include "format.h"
#include "log_math.h"
#include "rdp_internal.h"

namespace dpgnn::privacy {

namespace {

double laplace_rdp_at(double alpha, double z) {
  const double am1 = alpha - 1.0;
  const double denom = 2.0 * alpha - 1.0;
  const double x = am1 / z;
  const double y = alpha / z;
  if (x <= 1.0) {
    const double w = alpha / denom;
    const double v = am1 / denom;
    const double f = w * detail::expm1_minus_x(x) + v * detail::expm1_minus_x(-y);
    return std::log1p(f) / am1;
  }
  const double log_w = std::log(alpha) - std::log(denom);
  const double log_v = std::log(am1) - std::log(denom);
  return (log_w + x + std::log1p(std::exp(log_v - log_w - x - y))) / am1;
}

}  // namespace

std::vector<double> rdp_laplace(double noise_multiplier, const std::vector<double>& orders) {
  validate_orders(orders);
  detail::check_noise_multiplier(noise_multiplier);
  std::vector<double> rdp;
  rdp.reserve(orders.size());
  for (double a : orders) rdp.push_back(laplace_rdp_at(a, noise_multiplier));
  detail::check_finite_rdp(rdp, orders, "laplace");
  return rdp;
}

}  // namespace dpgnn::privacy
