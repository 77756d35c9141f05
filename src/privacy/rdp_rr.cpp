// Rényi DP of k-ary randomized response (k-RR; Warner 1965, Kairouz, Oh & Viswanath 2016):
// the true value v with probability p = e^eps / (e^eps + k - 1), every other value with
// r = 1 / (e^eps + k - 1), eps = 1 / z. For two inputs v != v' the output distributions P and
// Q differ only at v (P: p, Q: r) and at v' (P: r, Q: p) and agree (r) on the k - 2 others, so
// for alpha > 1 (Mironov 2017, "Rényi Differential Privacy", Definition 3; its Table II gives
// the k = 2 row, 1/(alpha-1) ln(p^alpha (1-p)^(1-alpha) + (1-p)^alpha p^(1-alpha))):
//   D_alpha(P || Q) = 1/(alpha-1) ln( p^alpha r^(1-alpha) + r^alpha p^(1-alpha) + (k-2) r ).
// Every pair v != v' gives the same value, so it is the mechanism's RDP. With p = r e^eps:
//   D_alpha = [ ln(e^{alpha eps} + e^{-(alpha-1) eps} + k - 2) - ln(e^eps + k - 1) ] / (alpha-1),
// evaluated by log-sum-exp (alpha eps reaches 1e6). As alpha -> infinity it tends to eps, the
// mechanism's pure-DP bound, which it never exceeds (the minimum below only guards rounding).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"
#include "rdp_internal.h"

namespace dpgnn::privacy {

std::vector<double> rdp_randomized_response(std::int64_t categories, double noise_multiplier,
                                            const std::vector<double>& orders) {
  validate_orders(orders);
  detail::check_noise_multiplier(noise_multiplier);
  if (categories < 2)
    throw std::invalid_argument("randomized response needs k >= 2 categories, got " + std::to_string(categories));
  const long double eps = 1.0L / noise_multiplier;
  const long double others = static_cast<long double>(categories - 2);
  // ln(e^eps + k - 1)
  const long double log_norm = eps + std::log1p(static_cast<long double>(categories - 1) * std::exp(-eps));
  std::vector<double> rdp;
  rdp.reserve(orders.size());
  for (double a : orders) {
    const long double alpha = a;
    const long double t1 = alpha * eps, t2 = -(alpha - 1) * eps;  // t1 >= t2
    long double sum = 1.0L + std::exp(t2 - t1);
    if (others > 0) sum += others * std::exp(-t1);
    const long double value = (t1 + std::log(sum) - log_norm) / (alpha - 1);
    rdp.push_back(static_cast<double>(std::max(0.0L, std::min(value, eps))));
  }
  detail::check_finite_rdp(rdp, orders, "rr");
  return rdp;
}

}  // namespace dpgnn::privacy
