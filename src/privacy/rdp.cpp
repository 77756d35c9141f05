// The plain Gaussian mechanism's RDP and the dispatch from a Mechanism to its accountant.
//
// Gaussian: D_alpha(N(0, s^2) || N(Delta, s^2)) = alpha Delta^2 / (2 s^2) = alpha / (2 z^2)
// with z = s / Delta (Mironov 2017, "Rényi differential privacy", Corollary 3).
#include "dpgnn/privacy/rdp.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "dpgnn/privacy/orders.h"
#include "rdp_internal.h"
#include "format.h"

namespace dpgnn::privacy {

std::vector<double> rdp_gaussian(double noise_multiplier, const std::vector<double>& orders) {
  validate_orders(orders);
  if (!std::isfinite(noise_multiplier) || !(noise_multiplier > 0.0))
    throw std::invalid_argument("noise_multiplier must be a finite number > 0, got " +
                                detail::format_double(noise_multiplier));
  std::vector<double> rdp;
  rdp.reserve(orders.size());
  for (double a : orders) rdp.push_back(a / (2.0 * noise_multiplier * noise_multiplier));
  detail::check_finite_rdp(rdp, orders, "gaussian");
  return rdp;
}

std::vector<double> rdp_per_step(const Mechanism& m, const std::vector<double>& orders) {
  switch (m.scheme) {
    case Scheme::kGaussian: return rdp_gaussian(m.noise_multiplier, orders);
    case Scheme::kWor: {
      // Re-validate (a Mechanism may have been assembled field by field).
      const Mechanism v = Mechanism::wor(m.dataset_size, m.batch_size, m.noise_multiplier);
      return rdp_wor(v.sampling_rate, v.noise_multiplier, orders);
    }
    case Scheme::kPoisson:
      return rdp_poisson(m.sampling_rate, m.noise_multiplier, orders);
    case Scheme::kDpGnn: {
      const Mechanism v = Mechanism::dpgnn(m.dataset_size, m.batch_size, m.max_degree, m.layers,
                                           m.noise_multiplier);
      return rdp_dpgnn(v.dataset_size, v.batch_size, v.group_size(), v.noise_multiplier, orders);
    }
  }
  throw std::logic_error("rdp_per_step: unknown scheme");
}

namespace detail {

void check_finite_rdp(const std::vector<double>& rdp, const std::vector<double>& orders,
                      const char* scheme) {
  for (std::size_t i = 0; i < rdp.size(); ++i) {
    if (std::isnan(rdp[i]) || rdp[i] < 0.0)
      throw std::logic_error(std::string("RDP of ") + scheme + " at order " +
                             detail::format_double(orders[i]) + " is " + detail::format_double(rdp[i]) +
                             " (numerical failure)");
    if (!std::isfinite(rdp[i]))
      throw std::invalid_argument(std::string("RDP of ") + scheme + " at order " +
                                  detail::format_double(orders[i]) +
                                  " overflows a double: the noise_multiplier is too small for "
                                  "this order (use more noise or smaller orders)");
  }
}

}  // namespace detail
}  // namespace dpgnn::privacy
