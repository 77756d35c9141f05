// RDP -> (epsilon, delta)-DP, minimised over the tracked orders.
//
//  kBalle   (default) Balle, Barthe, Gaboardi, Hsu & Sato 2020, "Hypothesis testing
//           interpretations and Rényi DP", Theorem 21 (also Asoodeh et al. 2020, eq. 20):
//             epsilon = rdp(alpha) + ln(1 - 1/alpha) - (ln delta + ln alpha) / (alpha - 1).
//  kMironov Mironov 2017, "Rényi differential privacy", Proposition 3:
//             epsilon = rdp(alpha) + ln(1/delta) / (alpha - 1).
// Both clip epsilon at 0. Both also use, at every order, the total-variation bound
// TV <= sqrt(1 - exp(-KL)) (Bretagnolle-Huber) with KL <= rdp(alpha) (Rényi divergence is
// non-decreasing in alpha; van Erven & Harremoës 2014, Theorem 3): if
// delta >= sqrt(1 - exp(-rdp(alpha))) the mechanism is (0, delta)-DP. It matters only for
// RDP below delta^2 and matches dp_accounting's compute_epsilon there.
#pragma once

#include <string>
#include <vector>

namespace dpgnn::privacy {

enum class Conversion { kBalle, kMironov };

std::string conversion_name(Conversion conversion);          // "balle", "mironov"
Conversion parse_conversion(const std::string& name);        // throws std::invalid_argument

struct EpsilonAtOrder {
  double epsilon = 0.0;  // >= 0
  double order = 0.0;    // the minimising alpha (0 when `pld`)
  bool pld = false;      // true when a privacy loss distribution gave the (smaller) value
};

struct DeltaAtOrder {
  double delta = 0.0;  // in [0, 1]
  double order = 0.0;  // the minimising alpha
};

// Smallest epsilon over the orders for the given total RDP curve. delta in (0, 1).
// Throws std::invalid_argument for mismatched sizes, bad orders, NaN or negative RDP.
EpsilonAtOrder epsilon_from_rdp(const std::vector<double>& orders, const std::vector<double>& rdp,
                                double delta, Conversion conversion = Conversion::kBalle);

// Smallest delta over the orders for the given total RDP curve. epsilon >= 0.
DeltaAtOrder delta_from_rdp(const std::vector<double>& orders, const std::vector<double>& rdp,
                            double epsilon, Conversion conversion = Conversion::kBalle);

// Throws std::invalid_argument unless 0 < delta < 1 (names the parameter).
void validate_delta(double delta);

}  // namespace dpgnn::privacy
