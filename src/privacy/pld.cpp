// Discrete privacy loss distributions: hockey-stick queries, FFT composition with a
// Chernoff-bounded window, and the exact mu-GDP curve (see pld.h for why each step is a
// safe over-estimate).
#include "dpgnn/privacy/pld.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <stdexcept>

#include "fft.h"
#include "normal.h"

namespace dpgnn::privacy {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ln E[e^{lambda L}] over the finite part of a PLD (max-shifted log-sum-exp).
double log_mgf(const DiscretePld& p, double lambda) {
  double top = -kInf;
  for (std::size_t j = 0; j < p.mass.size(); ++j)
    if (p.mass[j] > 0.0) top = std::max(top, lambda * static_cast<double>(p.offset + static_cast<std::int64_t>(j)) * p.h);
  if (top == -kInf) return -kInf;
  double s = 0.0;
  for (std::size_t j = 0; j < p.mass.size(); ++j)
    if (p.mass[j] > 0.0)
      s += p.mass[j] * std::exp(lambda * static_cast<double>(p.offset + static_cast<std::int64_t>(j)) * p.h - top);
  return top + std::log(s);
}

// Chernoff exponents: lambda = 2^k, k = -8..10 (the bound holds for every lambda > 0; the
// grid only decides how tight it is).
std::vector<double> chernoff_lambdas() {
  std::vector<double> l;
  for (int k = -8; k <= 10; ++k) l.push_back(std::ldexp(1.0, k));
  return l;
}

std::int64_t positive_mod(std::int64_t x, std::int64_t n) {
  const std::int64_t r = x % n;
  return r < 0 ? r + n : r;
}

}  // namespace

double DiscretePld::delta(double epsilon) const {
  double d = infinity_mass;
  for (std::size_t j = 0; j < mass.size(); ++j) {
    const double l = static_cast<double>(offset + static_cast<std::int64_t>(j)) * h;
    if (l > epsilon && mass[j] > 0.0) d += mass[j] * -std::expm1(epsilon - l);
  }
  return std::min(d, 1.0);
}

double DiscretePld::epsilon(double target) const {
  if (infinity_mass >= target) return kInf;
  // Walk down the grid: on [l_k, l_{k+1}) delta(eps) = A - e^{eps - l_k} C_k, with A the mass
  // above l_k (incl. +inf) and C_k = sum_{j > k} m_j e^{l_k - l_j} <= A (kept relative to l_k
  // so that e^{loss} never overflows for losses in the thousands).
  const double e_h = std::exp(-h);
  double a = infinity_mass, c = 0.0;
  for (std::size_t k = mass.size(); k-- > 0;) {
    const double l = static_cast<double>(offset + static_cast<std::int64_t>(k)) * h;
    if (a - c >= target) return std::max(0.0, l + std::log((a - target) / c));
    a += mass[k];
    c = (c + mass[k]) * e_h;  // now relative to l_{k-1} = l_k - h
  }
  if (a <= target) return 0.0;
  const double l_below = static_cast<double>(offset - 1) * h;
  return std::max(0.0, l_below + std::log((a - target) / c));
}

DiscretePld compose(const std::vector<std::pair<const DiscretePld*, std::int64_t>>& parts, double tail,
                    std::size_t max_points) {
  if (parts.empty()) throw std::invalid_argument("compose: no parts");
  const double h = parts.front().first->h;
  for (const auto& [p, c] : parts) {
    if (p->h != h) throw std::invalid_argument("compose: parts on different grids");
    if (c < 1) throw std::invalid_argument("compose: counts must be >= 1");
  }
  if (parts.size() == 1 && parts.front().second == 1) return *parts.front().first;

  // +inf in any step is +inf in the sum: 1 - prod (1 - inf_i)^c_i.
  double log_finite = 0.0;
  for (const auto& [p, c] : parts) log_finite += static_cast<double>(c) * std::log1p(-p->infinity_mass);
  double infinity_mass = -std::expm1(log_finite);

  // Window [lo, hi] of the summed loss from Chernoff bounds (each side's excess <= tail):
  // P[S >= u] <= exp(sum c K(lambda) - lambda u), P[S <= l] <= exp(sum c K(-lambda) + lambda l).
  const std::vector<double> lambdas = chernoff_lambdas();
  std::vector<double> k_up(lambdas.size(), 0.0), k_down(lambdas.size(), 0.0);
  double support_lo = 0.0, support_hi = 0.0;
  for (const auto& [p, c] : parts) {
    std::size_t first = 0, last = p->mass.size();
    while (first < last && p->mass[first] <= 0.0) ++first;
    while (last > first && p->mass[last - 1] <= 0.0) --last;
    if (first == last) continue;
    support_lo += static_cast<double>(c) * static_cast<double>(p->offset + static_cast<std::int64_t>(first)) * h;
    support_hi += static_cast<double>(c) * static_cast<double>(p->offset + static_cast<std::int64_t>(last - 1)) * h;
    for (std::size_t i = 0; i < lambdas.size(); ++i) {
      k_up[i] += static_cast<double>(c) * log_mgf(*p, lambdas[i]);
      k_down[i] += static_cast<double>(c) * log_mgf(*p, -lambdas[i]);
    }
  }
  const double log_tail = std::log(tail);
  double hi = support_hi, lo = support_lo;
  for (std::size_t i = 0; i < lambdas.size(); ++i) {
    hi = std::min(hi, (k_up[i] - log_tail) / lambdas[i]);
    lo = std::max(lo, -(k_down[i] - log_tail) / lambdas[i]);
  }
  const std::int64_t a = static_cast<std::int64_t>(std::floor(lo / h));
  const std::int64_t b = static_cast<std::int64_t>(std::ceil(hi / h));
  std::size_t n = 1;
  while (static_cast<std::int64_t>(n) < b - a + 1) n <<= 1;
  if (n > max_points) throw std::domain_error("compose: the loss window needs more grid points than allowed");
  const std::int64_t nn = static_cast<std::int64_t>(n);

  // Circular convolution: product of the transforms, each raised to its count.
  std::vector<std::complex<double>> acc(n, {1.0, 0.0}), x(n);
  for (const auto& [p, c] : parts) {
    std::fill(x.begin(), x.end(), std::complex<double>(0.0, 0.0));
    for (std::size_t j = 0; j < p->mass.size(); ++j)
      x[static_cast<std::size_t>(positive_mod(p->offset + static_cast<std::int64_t>(j), nn))] += p->mass[j];
    detail::fft(x, false);
    const double cd = static_cast<double>(c);
    for (std::size_t k = 0; k < n; ++k) acc[k] *= c == 1 ? x[k] : std::pow(x[k], cd);
  }
  detail::fft(acc, true);

  DiscretePld out;
  out.h = h;
  out.offset = a;
  out.mass.resize(n);
  for (std::int64_t j = 0; j < nn; ++j)
    out.mass[static_cast<std::size_t>(j)] =
        std::max(0.0, acc[static_cast<std::size_t>(positive_mod(a + j, nn))].real() / static_cast<double>(n));
  // Mass above the window wrapped to lower losses: bound it and count it at +inf.
  const double top = (static_cast<double>(a + nn) - 0.5) * h;
  double above = support_hi >= top ? 1.0 : 0.0;
  if (above > 0.0)
    for (std::size_t i = 0; i < lambdas.size(); ++i)
      above = std::min(above, std::exp(k_up[i] - lambdas[i] * top));
  out.infinity_mass = std::min(1.0, infinity_mass + above);
  // Drop trailing and leading zeros (keeps later queries short).
  std::size_t first = 0, last = out.mass.size();
  while (first < last && out.mass[first] == 0.0) ++first;
  while (last > first && out.mass[last - 1] == 0.0) --last;
  out.mass = std::vector<double>(out.mass.begin() + static_cast<std::ptrdiff_t>(first),
                                 out.mass.begin() + static_cast<std::ptrdiff_t>(last));
  out.offset += static_cast<std::int64_t>(first);
  return out;
}

double gdp_delta(double mu, double epsilon) {
  // Balle & Wang 2018, Thm 8; Dong, Roth & Su 2022, Cor. 2.13. The second term in logs so
  // that e^eps never overflows.
  const double first = detail::normal_cdf(-epsilon / mu + mu / 2.0);
  const double second = std::exp(epsilon + detail::log_normal_cdf(-epsilon / mu - mu / 2.0));
  return std::max(0.0, first - second);
}

double gdp_epsilon(double mu, double delta) {
  if (!(mu > 0.0) || !std::isfinite(mu)) throw std::invalid_argument("gdp_epsilon: mu must be finite and > 0");
  if (gdp_delta(mu, 0.0) <= delta) return 0.0;
  double lo = 0.0, hi = 1.0;
  while (gdp_delta(mu, hi) > delta) {
    lo = hi;
    hi *= 2.0;
    if (hi > 1e6) throw std::domain_error("gdp_epsilon: epsilon beyond 1e6");
  }
  // delta is decreasing in eps: keep delta(lo) > target >= delta(hi); return hi (safe side).
  for (int it = 0; it < 200 && hi - lo > 1e-13 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (gdp_delta(mu, mid) > delta) lo = mid; else hi = mid;
  }
  return hi;
}

}  // namespace dpgnn::privacy
