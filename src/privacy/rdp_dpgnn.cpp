// Per-step node-level RDP of DP-GNN: Daigavane et al., "Node-Level Differentially Private
// Graph Neural Networks", Theorem 1 (proof in their Appendix B):
//   gamma(alpha) = 1/(alpha-1) ln E_rho[exp(alpha (alpha-1) 2 rho^2 C^2 / sigma^2)],
//   rho ~ Hypergeometric(N training nodes, N(K, r) "successes", m draws),
// the number of sampled nodes whose r-hop neighbourhood contains the changed node. With
// sigma = z * 2C N(K, r) (noise_convention.h) the exponent is
//   alpha (alpha-1) rho^2 / (2 z^2 N(K, r)^2),
// so with m = N (rho = N(K, r) surely) the step is the plain Gaussian alpha / (2 z^2).
//
// Numerics: the hypergeometric pmf comes from hypergeometric.h (log space, no lgamma).
// E - 1 = sum_k p(k) expm1(c k^2) has non-negative terms and is summed in log space, so tiny
// RDP keeps full relative precision.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"
#include "hypergeometric.h"
#include "log_math.h"
#include "rdp_internal.h"
#include "format.h"

namespace dpgnn::privacy {

std::vector<double> rdp_dpgnn(std::int64_t n, std::int64_t m, std::int64_t g, double z,
                              const std::vector<double>& orders) {
  validate_orders(orders);
  if (n < 1) throw std::invalid_argument("dpgnn: dataset_size must be >= 1, got " + std::to_string(n));
  if (m < 1 || m > n)
    throw std::invalid_argument("dpgnn: batch_size must be in [1, dataset_size = " +
                                std::to_string(n) + "], got " + std::to_string(m));
  if (g < 1 || g > n)
    throw std::invalid_argument("dpgnn: N(K, r) must be in [1, dataset_size = " +
                                std::to_string(n) + "], got " + std::to_string(g));
  detail::check_noise_multiplier(z);

  const detail::HypergeometricLogPmf rho = detail::hypergeometric_log_pmf(n, g, m);
  const std::int64_t k_lo = rho.first;
  const std::int64_t k_hi = k_lo + static_cast<std::int64_t>(rho.log_p.size()) - 1;
  const std::vector<double>& log_p = rho.log_p;
  const double dg = static_cast<double>(g);

  std::vector<double> rdp;
  rdp.reserve(orders.size());
  for (double alpha : orders) {
    // c = alpha (alpha - 1) / (2 z^2 N(K,r)^2); rho = k contributes p(k) expm1(c k^2).
    const double c = alpha * (alpha - 1.0) / (2.0 * z * z * dg * dg);
    detail::LogSum sum;
    for (std::int64_t k = std::max<std::int64_t>(k_lo, 1); k <= k_hi; ++k) {
      const double dk = static_cast<double>(k);
      sum.add(log_p[static_cast<std::size_t>(k - k_lo)] + detail::log_expm1(c * dk * dk));
    }
    rdp.push_back(detail::log_add(0.0, sum.value()) / (alpha - 1.0));
  }
  detail::check_finite_rdp(rdp, orders, "dpgnn");
  return rdp;
}

}  // namespace dpgnn::privacy
