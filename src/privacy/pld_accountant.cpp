// A history of mechanisms -> one-step dominating pairs -> discretised, composed PLDs ->
// epsilon / delta (see pld_accountant.h for the pair of each scheme and its source).
#include "dpgnn/privacy/pld_accountant.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>

#include "dpgnn/privacy/conversion.h"
#include "dpgnn/privacy/pld.h"

namespace dpgnn::privacy {

namespace {

// The pair of one step in the remove direction and in the add direction (equal for the
// symmetric pairs).
std::pair<MixturePair, MixturePair> pairs_of(const Mechanism& m) {
  const double mu = 1.0 / m.noise_multiplier;
  switch (m.scheme) {
    case Scheme::kGaussian: {
      const MixturePair g{PairKind::kSymmetric, 1.0, mu};
      return {g, g};
    }
    case Scheme::kWor: {
      const MixturePair w{PairKind::kSymmetric, std::min(1.0, m.sampling_rate), mu};
      return {w, w};
    }
    case Scheme::kPoisson:
      if (m.sampling_rate >= 1.0) {
        const MixturePair g{PairKind::kSymmetric, 1.0, mu};
        return {g, g};
      }
      return {{PairKind::kRemove, m.sampling_rate, mu}, {PairKind::kAdd, m.sampling_rate, mu}};
    case Scheme::kDpGnn:
    case Scheme::kGroupWor: {
      // A unit's g examples (g = N(K, r) for DP-GNN), k of them in the batch: shift k / (g z).
      const std::int64_t g = m.group_size();
      if (m.batch_size >= m.dataset_size) {  // all g always drawn: the plain Gaussian
        const MixturePair full{PairKind::kSymmetric, 1.0, mu};
        return {full, full};
      }
      const MixturePair c{PairKind::kCountMixture, m.sampling_rate, mu / static_cast<double>(g),
                          m.dataset_size, m.batch_size, g};
      return {c, c};
    }
    case Scheme::kLaplace: {
      const MixturePair l{PairKind::kLaplace, 1.0, mu};
      return {l, l};
    }
    case Scheme::kExponential:
    case Scheme::kRandomizedResponse: break;
  }
  throw std::invalid_argument("no privacy loss distribution for scheme " + scheme_name(m.scheme) +
                              " (accounted by RDP)");
}

bool is_gaussian(const MixturePair& p) { return p.kind == PairKind::kSymmetric && p.q >= 1.0; }

// Standard deviation of the finite part of a PLD.
double loss_sd(const DiscretePld& p) {
  double m0 = 0.0, m1 = 0.0, m2 = 0.0;
  for (std::size_t j = 0; j < p.mass.size(); ++j) {
    const double l = static_cast<double>(p.offset + static_cast<std::int64_t>(j)) * p.h;
    m0 += p.mass[j];
    m1 += p.mass[j] * l;
    m2 += p.mass[j] * l * l;
  }
  if (!(m0 > 0.0)) return 0.0;
  const double mean = m1 / m0;
  return std::sqrt(std::max(0.0, m2 / m0 - mean * mean));
}

// The composed PLD of one direction. Gaussian steps are merged into one GDP step with
// mu^2 = sum T_i mu_i^2 (Dong, Roth & Su 2022, Cor. 3.3) before discretising.
DiscretePld composed(const std::map<MixturePair, std::int64_t>& counts, const PldOptions& options) {
  double mu2 = 0.0;
  std::vector<std::pair<MixturePair, std::int64_t>> parts;
  for (const auto& [pair, count] : counts) {
    if (is_gaussian(pair)) mu2 += static_cast<double>(count) * pair.mu * pair.mu;
    else parts.emplace_back(pair, count);
  }
  if (mu2 > 0.0) parts.push_back({MixturePair{PairKind::kSymmetric, 1.0, std::sqrt(mu2)}, 1});
  // The grid: options.grid, or finer when a step's losses are concentrated in a few cells
  // (large z, small q: the loss of one step spreads over ~q mu), since the discretisation
  // error grows with h relative to that spread: h <= (narrowest part's standard deviation)
  // / 32, by halvings. Measured on the default grid (tests/privacy/test_pld_accountant.cpp
  // checks the result against the independent reference at such parameters).
  double h = options.grid;
  std::vector<DiscretePld> first;  // on the default grid, reused when h stays
  double narrowest = std::numeric_limits<double>::infinity();
  for (const auto& [pair, count] : parts) {
    first.push_back(discretise(pair, h, options.tail));
    narrowest = std::min(narrowest, loss_sd(first.back()));
  }
  while (h > narrowest / 32.0 && h > 1e-8) h /= 2.0;
  for (;; h *= 2.0) {
    std::vector<DiscretePld> plds;
    plds.reserve(parts.size());
    bool too_wide = false;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      plds.push_back(h == options.grid ? first[i] : discretise(parts[i].first, h, options.tail));
      if (plds.back().mass.size() > options.max_points) too_wide = true;
    }
    if (!too_wide) {
      std::vector<std::pair<const DiscretePld*, std::int64_t>> refs;
      for (std::size_t i = 0; i < parts.size(); ++i) refs.emplace_back(&plds[i], parts[i].second);
      try {
        return compose(refs, options.tail, options.max_points);
      } catch (const std::domain_error&) {
        // window too wide for this grid: coarsen (still pessimistic, see pld.h)
      }
    }
    if (h > 1.0) throw std::domain_error("pld: the privacy loss is too spread out even on a grid of 1");
  }
}

// Calls `per_direction` on the composed PLD of each direction and keeps the larger result.
double worst_direction(const std::vector<AccountantEvent>& events, const PldOptions& options,
                       const std::function<double(const DiscretePld&)>& per_direction,
                       const std::function<double(double)>& gaussian_only) {
  std::map<MixturePair, std::int64_t> remove, add;
  bool asymmetric = false;
  double mu2 = 0.0;
  bool only_gaussian = true;
  for (const AccountantEvent& e : events) {
    if (e.count < 1) throw std::invalid_argument("pld: an event's count must be >= 1");
    const auto [r, a] = pairs_of(e.mechanism);
    remove[r] += e.count;
    add[a] += e.count;
    asymmetric = asymmetric || r.kind != PairKind::kSymmetric;
    if (is_gaussian(r)) mu2 += static_cast<double>(e.count) * r.mu * r.mu;
    else only_gaussian = false;
  }
  // The exact mu-GDP path: no discretisation at all.
  if (only_gaussian) return gaussian_only(std::sqrt(mu2));
  double worst = per_direction(composed(remove, options));
  if (asymmetric) worst = std::max(worst, per_direction(composed(add, options)));
  return worst;
}

}  // namespace

// Exponential and randomized response have no pair here: a history with either is accounted by RDP.
bool has_pld(Scheme scheme) { return scheme != Scheme::kExponential && scheme != Scheme::kRandomizedResponse; }

bool has_pld(const std::vector<AccountantEvent>& events) {
  return std::all_of(events.begin(), events.end(), [](const AccountantEvent& e) { return has_pld(e.mechanism.scheme); });
}

double pld_epsilon(const std::vector<AccountantEvent>& events, double delta, const PldOptions& options) {
  validate_delta(delta);
  if (events.empty()) return 0.0;
  return worst_direction(
      events, options, [&](const DiscretePld& p) { return p.epsilon(delta); },
      [&](double mu) { return gdp_epsilon(mu, delta); });
}

double pld_delta(const std::vector<AccountantEvent>& events, double epsilon, const PldOptions& options) {
  if (!(epsilon >= 0.0)) throw std::invalid_argument("pld_delta: epsilon must be >= 0");
  if (events.empty()) return 0.0;
  return worst_direction(
      events, options, [&](const DiscretePld& p) { return p.delta(epsilon); },
      [&](double mu) { return gdp_delta(mu, epsilon); });
}

std::optional<double> pld_epsilon_of_run(const std::vector<AccountantEvent>& events, double delta,
                                         const std::optional<Subsample>& subsample) {
  validate_delta(delta);
  if (!has_pld(events)) return std::nullopt;
  try {
    if (!subsample) return pld_epsilon(events, delta);
    const double q = subsample->rate();
    if (!(delta / q < 1.0)) return std::nullopt;  // epsilon_of_run reports this case
    const double inner = pld_epsilon(events, delta / q);
    return std::isfinite(inner) ? amplified_epsilon(inner, q) : inner;
  } catch (const std::domain_error&) {
    return std::nullopt;
  }
}

std::optional<double> pld_delta_of_run(const std::vector<AccountantEvent>& events, double epsilon,
                                       const std::optional<Subsample>& subsample) {
  if (!has_pld(events)) return std::nullopt;
  try {
    if (!subsample) return pld_delta(events, epsilon);
    const double q = subsample->rate();
    return q * pld_delta(events, inner_epsilon(epsilon, q));
  } catch (const std::domain_error&) {
    return std::nullopt;
  }
}

}  // namespace dpgnn::privacy
