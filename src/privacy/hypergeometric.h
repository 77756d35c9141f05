// The hypergeometric distribution of the number of a unit's g examples in a batch of m drawn
// without replacement from n (internal; shared by DP-GNN's RDP and its PLD).
#pragma once

#include <cstdint>
#include <vector>

namespace dpgnn::privacy::detail {

// ln P[rho = k] for k = first .. first + log_p.size() - 1, rho ~ Hypergeometric(n, g, m).
// Built in log space from the ratio of consecutive probabilities,
//   p(k+1)/p(k) = (g-k)(m-k) / ((k+1)(n-g-m+k+1)),
// starting from the mode and normalised by its log-sum: no lgamma of 10^8-sized arguments,
// whose rounding would cost 1e-7 relative. Needs 1 <= m <= n, 1 <= g <= n (unchecked).
struct HypergeometricLogPmf {
  std::int64_t first = 0;
  std::vector<double> log_p;
};
HypergeometricLogPmf hypergeometric_log_pmf(std::int64_t n, std::int64_t g, std::int64_t m);

}  // namespace dpgnn::privacy::detail
