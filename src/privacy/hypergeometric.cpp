#include "hypergeometric.h"

#include <algorithm>
#include <cmath>

#include "log_math.h"

namespace dpgnn::privacy::detail {

HypergeometricLogPmf hypergeometric_log_pmf(std::int64_t n, std::int64_t g, std::int64_t m) {
  // Support: max(0, m - (n - g)) .. min(g, m).
  const std::int64_t k_lo = std::max<std::int64_t>(0, m - (n - g));
  const std::int64_t k_hi = std::min(g, m);
  const double dn = static_cast<double>(n), dm = static_cast<double>(m), dg = static_cast<double>(g);
  std::int64_t mode = static_cast<std::int64_t>(std::floor((dm + 1.0) * (dg + 1.0) / (dn + 2.0)));
  mode = std::clamp(mode, k_lo, k_hi);
  HypergeometricLogPmf out;
  out.first = k_lo;
  out.log_p.assign(static_cast<std::size_t>(k_hi - k_lo + 1), 0.0);
  auto at = [&](std::int64_t k) -> double& { return out.log_p[static_cast<std::size_t>(k - k_lo)]; };
  auto log_ratio_up = [&](std::int64_t k) {  // ln p(k+1)/p(k)
    const double dk = static_cast<double>(k);
    return std::log(dg - dk) + std::log(dm - dk) - std::log(dk + 1.0) - std::log(dn - dg - dm + dk + 1.0);
  };
  for (std::int64_t k = mode; k < k_hi; ++k) at(k + 1) = at(k) + log_ratio_up(k);
  for (std::int64_t k = mode; k > k_lo; --k) at(k - 1) = at(k) - log_ratio_up(k - 1);
  const double log_total = log_sum_exp(out.log_p);
  for (double& v : out.log_p) v -= log_total;
  return out;
}

}  // namespace dpgnn::privacy::detail
