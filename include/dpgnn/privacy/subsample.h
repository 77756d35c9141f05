// Amplification by subsampling of a whole run: the run's mechanism is applied to a uniform
// sample of m of the n privacy units, drawn without replacement and kept hidden (DPAR's graph
// sampling at rate q' = m / n, Zhang et al. Sec. 3.2, "Privacy amplification").
//
// Balle, Barthe & Gaboardi 2018, "Privacy Amplification by Subsampling: Tight Analyses via
// Couplings and Divergences" (NeurIPS), Sec. 5, sampling without replacement under the
// substitution (replace-one) relation: if the mechanism is (eps, delta)-DP on samples of size
// m with respect to replacing one unit, then running it on a uniform m-subset of n units is
//     (log(1 + q (e^eps - 1)),  q delta)-DP,   q = m / n.
// The mechanism must be private when one sampled unit is exchanged for another unit
// (docs/privacy.md, "DPAR: graph sampling", says why DPAR's pipeline is).
//
// The accountant composes the run's events by RDP, converts once to (eps_in, delta / q) and
// then amplifies (epsilon_of_run below); calibration uses the same function, so the
// printed epsilon and the calibrated noise agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dpgnn/privacy/conversion.h"

namespace dpgnn::privacy {

struct Subsample {
  std::int64_t population = 0;  // n units
  std::int64_t sample = 0;      // m units, 1 <= m <= n

  // Throws std::invalid_argument unless 1 <= sample <= population.
  static Subsample of(std::int64_t population, std::int64_t sample);
  double rate() const { return static_cast<double>(sample) / static_cast<double>(population); }

  // "subsample n=18333 m=1650"; parse is its inverse (throws std::invalid_argument).
  std::string to_string() const;
  static Subsample parse(const std::string& text);
  bool operator==(const Subsample& o) const { return population == o.population && sample == o.sample; }
};

// log(1 + q (e^eps - 1)) (Balle, Barthe & Gaboardi 2018, Sec. 5), computed as
// log1p(q expm1(eps)) without overflow for large eps.
double amplified_epsilon(double inner_epsilon, double rate);
// Its inverse: the inner epsilon whose amplification is `outer_epsilon`.
double inner_epsilon(double outer_epsilon, double rate);

// epsilon_from_rdp at `delta`, or with a subsample: the RDP curve converted at delta / q and
// the result amplified. Throws std::invalid_argument when delta / q >= 1.
EpsilonAtOrder epsilon_of_run(const std::vector<double>& orders, const std::vector<double>& rdp, double delta,
                              Conversion conversion, const std::optional<Subsample>& subsample);
// delta_from_rdp at `epsilon`, or with a subsample: q times the inner delta at the inner
// epsilon of `epsilon`.
DeltaAtOrder delta_of_run(const std::vector<double>& orders, const std::vector<double>& rdp, double epsilon,
                          Conversion conversion, const std::optional<Subsample>& subsample);

}  // namespace dpgnn::privacy
