// The one-run audit bound (Steinke, Nasr & Jagielski 2023, Theorem 3 / Algorithm 2) against
// independent computations written here: closed forms (fair-coin tails as integer counts,
// all guesses correct) and a slow direct sum of the binomial pmf in long double with the
// delta term's maximum taken by brute force.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "dpgnn/privacy/audit_bound.h"

namespace {

using dpgnn::privacy::AuditCounts;
using dpgnn::privacy::audit_epsilon_lower_bound;
using dpgnn::privacy::audit_p_value;
using dpgnn::privacy::log_binomial_upper_tail;

// pmf of Bin(r, p) by multiplying the binomial coefficient out, term by term (no lgamma).
long double direct_pmf(std::int64_t r, std::int64_t k, long double p) {
  long double c = 1.0L;
  for (std::int64_t j = 1; j <= k; ++j) c = c * static_cast<long double>(r - k + j) / static_cast<long double>(j);
  return c * std::pow(p, static_cast<long double>(k)) * std::pow(1.0L - p, static_cast<long double>(r - k));
}

long double direct_p_value(std::int64_t m, std::int64_t r, std::int64_t v, long double eps, long double delta) {
  const long double p = std::exp(eps) / (std::exp(eps) + 1.0L);
  std::vector<long double> pmf(static_cast<std::size_t>(r + 1));
  for (std::int64_t k = 0; k <= r; ++k) pmf[static_cast<std::size_t>(k)] = direct_pmf(r, k, p);
  long double tail = 0.0L;
  for (std::int64_t k = v; k <= r; ++k) tail += pmf[static_cast<std::size_t>(k)];
  long double alpha = 0.0L;
  for (std::int64_t i = 1; i <= v; ++i) {
    long double window = 0.0L;  // P[v - i <= Bin < v], summed afresh for each i
    for (std::int64_t k = v - i; k < v; ++k) window += pmf[static_cast<std::size_t>(k)];
    alpha = std::max(alpha, window / static_cast<long double>(i));
  }
  return std::min(1.0L, tail + 2.0L * static_cast<long double>(m) * delta * alpha);
}

TEST(AuditBound, FairCoinTailIsACount) {
  // eps = 0, delta = 0: P[Bin(10, 1/2) >= 9] = (C(10,9) + C(10,10)) / 2^10 = 11 / 1024.
  EXPECT_NEAR(audit_p_value({10, 10, 9}, 0.0, 0.0), 11.0 / 1024.0, 1e-15);
  // P[Bin(20, 1/2) >= 15] = (15504 + 4845 + 1140 + 190 + 20 + 1) / 2^20.
  EXPECT_NEAR(audit_p_value({100, 20, 15}, 0.0, 0.0), 21700.0 / 1048576.0, 1e-14);
  EXPECT_DOUBLE_EQ(audit_p_value({5, 5, 0}, 0.0, 0.0), 1.0);
}

TEST(AuditBound, MatchesDirectSum) {
  struct Case {
    std::int64_t m, r, v;
    double eps, delta;
  };
  const std::vector<Case> cases = {{1000, 100, 70, 0.5, 1e-5}, {1000, 100, 90, 2.0, 1e-5}, {1000, 200, 150, 1.0, 0.0},
                                   {1000, 50, 50, 3.0, 1e-5},  {200, 200, 120, 0.3, 1e-3},  {1000, 300, 160, 0.0, 1e-2},
                                   {1000, 40, 25, 8.0, 1e-5}};
  for (const auto& c : cases) {
    const double got = audit_p_value({c.m, c.r, c.v}, c.eps, c.delta);
    const double want = static_cast<double>(direct_p_value(c.m, c.r, c.v, c.eps, c.delta));
    EXPECT_NEAR(got, want, 1e-12 + 1e-9 * want) << "m " << c.m << " r " << c.r << " v " << c.v << " eps " << c.eps;
  }
}

TEST(AuditBound, LogTailStaysFiniteWhereTheTermsUnderflow) {
  // P[Bin(5000, p) >= 5000] = p^5000: ln = 5000 ln p, far below double's underflow for eps = 0.
  EXPECT_NEAR(log_binomial_upper_tail(5000, 5000, 0.0), 5000.0 * std::log(0.5), 1e-6);
  const double eps = 4.0, lp = -std::log1p(std::exp(-eps));
  EXPECT_NEAR(log_binomial_upper_tail(5000, 5000, eps), 5000.0 * lp, 1e-6);
}

TEST(AuditBound, AllCorrectWithoutDeltaHasAClosedForm) {
  // delta = 0, v = r: p^r < beta  <=>  p < beta^(1/r)  <=>  eps < ln(q / (1 - q)), q = beta^(1/r).
  for (std::int64_t r : {10, 100, 1000}) {
    const double beta = 0.05, q = std::pow(beta, 1.0 / static_cast<double>(r));
    const double want = std::log(q / (1.0 - q));
    EXPECT_NEAR(audit_epsilon_lower_bound({r, r, r}, 0.0, beta), want, 1e-8) << r;
  }
}

TEST(AuditBound, LowerBoundIsTheThresholdOfTheDirectPValue) {
  struct Case {
    std::int64_t m, r, v;
    double delta;
  };
  for (const auto& c : std::vector<Case>{{1000, 100, 80, 1e-5}, {1000, 400, 260, 1e-5}, {1000, 1000, 1000, 1e-5},
                                         {500, 60, 50, 1e-3}}) {
    const double eps = audit_epsilon_lower_bound({c.m, c.r, c.v}, c.delta, 0.05);
    ASSERT_GT(eps, 0.0) << c.r << " " << c.v;
    EXPECT_LT(direct_p_value(c.m, c.r, c.v, eps, c.delta), 0.05L);
    EXPECT_GE(direct_p_value(c.m, c.r, c.v, eps + 1e-6, c.delta), 0.05L);
  }
}

TEST(AuditBound, ChanceLevelRefutesNothing) {
  EXPECT_EQ(audit_epsilon_lower_bound({1000, 100, 50}, 1e-5, 0.05), 0.0);
  EXPECT_EQ(audit_epsilon_lower_bound({1000, 0, 0}, 1e-5, 0.05), 0.0);
}

TEST(AuditBound, DeltaOnlyWeakensTheBound) {
  const double pure = audit_epsilon_lower_bound({1000, 200, 180}, 0.0, 0.05);
  const double approx = audit_epsilon_lower_bound({1000, 200, 180}, 1e-3, 0.05);
  EXPECT_LT(approx, pure);
  EXPECT_GT(approx, 0.0);
}

TEST(AuditBound, RejectsBadCounts) {
  EXPECT_THROW(audit_p_value({10, 11, 0}, 1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(audit_p_value({10, 5, 6}, 1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(audit_p_value({10, 5, 3}, -1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(audit_p_value({10, 5, 3}, 1.0, 2.0), std::invalid_argument);
  EXPECT_THROW(audit_epsilon_lower_bound({10, 5, 3}, 0.0, 1.0), std::invalid_argument);
}

}  // namespace
