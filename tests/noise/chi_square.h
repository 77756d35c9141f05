// Chi-square goodness of fit of integer draws against a law given by its bin masses, shared by
// the noise samplers' tests (noise/discrete_gaussian, noise/staircase_gaussian).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace dpgnn::testing {

struct ChiSquare {
  double statistic = 0;
  double least_expected = 0;  // the smallest expected count of a bin (the test wants >= 5)
};

// Bins [edges[i], edges[i+1]) plus the two tails (edges.size() + 1 bins, edges.size() degrees
// of freedom); mass(lo, hi) = P[lo <= X < hi] under the law tested.
template <typename Mass>
ChiSquare chi_square(const std::vector<std::int64_t>& xs, const std::vector<std::int64_t>& edges, const Mass& mass) {
  const std::int64_t big = std::int64_t{1} << 62;
  std::vector<std::int64_t> e = {-big};
  e.insert(e.end(), edges.begin(), edges.end());
  e.push_back(big);
  std::vector<double> observed(e.size() - 1);
  for (auto x : xs) observed[static_cast<std::size_t>(std::upper_bound(e.begin(), e.end(), x) - e.begin() - 1)] += 1;
  ChiSquare r;
  r.least_expected = static_cast<double>(xs.size());
  for (std::size_t b = 0; b + 1 < e.size(); ++b) {
    const double expected = mass(e[b], e[b + 1]) * static_cast<double>(xs.size());
    r.least_expected = std::min(r.least_expected, expected);
    r.statistic += (observed[b] - expected) * (observed[b] - expected) / expected;
  }
  return r;
}

}  // namespace dpgnn::testing
