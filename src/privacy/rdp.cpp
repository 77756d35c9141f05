// The plain Gaussian mechanism's and the exponential mechanism's RDP, and the dispatch from
// a Mechanism to its accountant.
//
// Gaussian: D_alpha(N(0, s^2) || N(Delta, s^2)) = alpha Delta^2 / (2 s^2) = alpha / (2 z^2)
// with z = s / Delta (Mironov 2017, "Rényi differential privacy", Corollary 3).
//
// Exponential mechanism, one selection, realised by Gumbel-max: adding Gumbel(beta) noise to
// every utility u(r) and reporting the argmax selects r with probability
// exp(u(r)/beta) / Z (the Gumbel-max identity; Durfee & Rogers 2019, "Practical
// Differentially Private Top-k Selection with Pay-what-you-get Composition", NeurIPS,
// Section 4.1, where one-shot Gumbel top-K is also shown to equal K peeled selections, so a
// top-K release is accounted as K events). Its privacy loss at outcome r is
// (u(r) - u'(r)) / beta + ln(Z'/Z), which over r moves within an interval of width
// 2 Delta / beta: the mechanism is eps-bounded range (BR) with eps = 2 / z, z = beta / Delta
// (BR defined in Durfee & Rogers 2019 and Dong, Durfee & Rogers 2020, "Optimal Differential
// Privacy Composition for Exponential Mechanisms", ICML). eps-BR implies (eps^2/8)-zCDP
// (Cesar & Rogers 2021, "Bounding, Concentrating, and Truncating: Unifying Privacy Loss
// Composition for Data Analytics", ALT; the proof is Hoeffding's lemma applied to the loss,
// which is confined to an interval of width eps), and rho-zCDP is (alpha, rho alpha)-RDP for
// every alpha > 1 (Bun & Steinke 2016, Definition 1.1): alpha eps^2 / 8 = alpha / (2 z^2).
// The same mechanism is eps-DP (its loss interval contains 0, because both output
// distributions sum to 1; equivalently McSherry & Talwar 2007, "Mechanism Design via
// Differential Privacy", FOCS: 2 Delta / beta-DP), and an eps-DP mechanism has RDP <= eps at
// every order (eps-DP is (infinity, eps)-RDP, Mironov 2017, Section III, and the Rényi
// divergence is non-decreasing in the order, van Erven & Harremoës 2014, "Rényi Divergence
// and Kullback-Leibler Divergence", IEEE Trans. Inf. Theory, Theorem 3). Both are upper
// bounds, so their minimum is one too.
#include "dpgnn/privacy/rdp.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dpgnn/privacy/orders.h"
#include "rdp_internal.h"
#include "format.h"

namespace dpgnn::privacy {

std::vector<double> rdp_gaussian(double noise_multiplier, const std::vector<double>& orders) {
  validate_orders(orders);
  detail::check_noise_multiplier(noise_multiplier);
  std::vector<double> rdp;
  rdp.reserve(orders.size());
  for (double a : orders) rdp.push_back(a / (2.0 * noise_multiplier * noise_multiplier));
  detail::check_finite_rdp(rdp, orders, "gaussian");
  return rdp;
}

std::vector<double> rdp_exponential(double noise_multiplier, const std::vector<double>& orders) {
  validate_orders(orders);
  detail::check_noise_multiplier(noise_multiplier);
  const double z = noise_multiplier;
  const double pure_dp = 2.0 / z;  // eps of eps-BR and of eps-DP
  std::vector<double> rdp;
  rdp.reserve(orders.size());
  // alpha eps^2 / 8 with eps = 2 / z is alpha / (2 z^2).
  for (double a : orders) rdp.push_back(std::min(a / (2.0 * z * z), pure_dp));
  detail::check_finite_rdp(rdp, orders, "exponential");
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
    case Scheme::kGroupWor: {
      // Daigavane et al., Theorem 1 holds for any bound g on a unit's occurrences.
      const Mechanism v =
          Mechanism::group_wor(m.dataset_size, m.batch_size, m.group_bound, m.noise_multiplier);
      return rdp_dpgnn(v.dataset_size, v.batch_size, v.group_bound, v.noise_multiplier, orders);
    }
    case Scheme::kExponential: return rdp_exponential(m.noise_multiplier, orders);
    case Scheme::kLaplace: return rdp_laplace(m.noise_multiplier, orders);
    case Scheme::kRandomizedResponse:
      return rdp_randomized_response(m.categories, m.noise_multiplier, orders);
  }
  throw std::logic_error("rdp_per_step: unknown scheme");
}

namespace detail {

void check_noise_multiplier(double z) {
  if (!std::isfinite(z) || !(z > 0.0))
    throw std::invalid_argument("noise_multiplier must be a finite number > 0, got " + format_double(z));
}

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
