// The one-run privacy audit bound of Steinke, Nasr & Jagielski, "Privacy Auditing with One
// (1) Training Run" (NeurIPS 2023), Theorem 3 (the (eps, delta)-DP case of their main
// theorem) and the search for the largest refuted epsilon of their Algorithm 2 (appendix;
// the authors' reference code computes the same p-value).
//
// Setting: m canaries, each included independently with probability 1/2 (S_i in {-1, +1}).
// From the algorithm's output the auditor guesses T_i in {-1, 0, +1} (0 = abstain), with r
// non-abstaining guesses, of which W are correct. If the algorithm is (eps, delta)-DP with
// respect to flipping one S_i, then for every v
//   P[W >= v] <= P[Bin(r, p) >= v] + 2 m delta * max_{i = 1..v} P[v - i <= Bin(r, p) < v] / i,
//   p = e^eps / (e^eps + 1)
// (the first term alone is their pure-DP statement). So observing v correct guesses refutes
// every eps whose p-value is below beta, at confidence 1 - beta; the lower bound is the
// largest such eps (0 when none).
// Standard library only, like the rest of privacy/.
#pragma once

#include <cstdint>

namespace dpgnn::privacy {

struct AuditCounts {
  std::int64_t canaries = 0;  // m
  std::int64_t guesses = 0;   // r (non-abstaining)
  std::int64_t correct = 0;   // v
};

// ln P[Bin(r, p) >= v], p = e^eps / (e^eps + 1), summed in log space; 0 for v <= 0.
double log_binomial_upper_tail(std::int64_t r, std::int64_t v, double eps);

// The right-hand side above (capped at 1): the probability of at least v correct guesses
// out of r under an (eps, delta)-DP algorithm with m canaries. std::invalid_argument unless
// 0 <= v <= r <= m, eps >= 0, 0 <= delta <= 1.
double audit_p_value(const AuditCounts& counts, double eps, double delta);

// The largest eps refuted at confidence 1 - beta, found by bisection as in their Algorithm 2:
// the returned lo has audit_p_value(lo) < beta, and some hi < lo + 1e-9 has p-value >= beta
// (the p-value grows with eps). 0 when even eps = 0 is not refuted. beta in (0, 1).
double audit_epsilon_lower_bound(const AuditCounts& counts, double delta, double beta);

}  // namespace dpgnn::privacy
