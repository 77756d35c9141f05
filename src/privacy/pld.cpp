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

constexpr double kUnitRoundoff = 0x1p-53;

// The error a butterfly of detail::fft adds, relative to the sum of its inputs' moduli:
// eta = mu + gamma_4 (sqrt 2 + mu) (Higham 2002, "Accuracy and Stability of Numerical
// Algorithms", Sec. 24.1), mu the twiddles' error. fft.cpp computes each twiddle as cos/sin
// of its own angle (2 pi k / n, one rounding, |angle| <= pi) by a libm accurate to about
// 1 ulp: |w_hat - w| <= 4 pi u + 2 sqrt 2 u < 16 u.
double butterfly_error() {
  const double u = kUnitRoundoff, mu = 16.0 * u, gamma4 = 4.0 * u / (1.0 - 4.0 * u);
  return mu + gamma4 * (std::sqrt(2.0) + mu);
}

// The relative l2 error bound of the radix-2 FFT of length n: Higham 2002, Thm 24.2:
// ||fl(F x) - F x||_2 <= rho ||F x||_2 with rho = L eta / (1 - L eta), L = log2 n.
double fft_relative_error(std::size_t n) {
  const double l_eta = std::log2(static_cast<double>(n)) * butterfly_error();
  return l_eta / (1.0 - l_eta);
}

double l2_norm(const std::vector<std::complex<double>>& x) {
  double s = 0.0;
  for (const auto& v : x) s += std::norm(v);
  return std::sqrt(s);
}

}  // namespace

double DiscretePld::error_charge(double epsilon) const {
  if (!(mass_error_l2 > 0.0) || window_hi < window_lo) return 0.0;
  // The window's grid points with loss > epsilon: index > epsilon / h, checked as delta() does.
  std::int64_t first = static_cast<std::int64_t>(std::floor(std::max(-9e18, std::min(9e18, epsilon / h)))) + 1;
  while (first > window_lo && static_cast<double>(first - 1) * h > epsilon) --first;
  while (first <= window_hi && !(static_cast<double>(first) * h > epsilon)) ++first;
  first = std::max(first, window_lo);
  if (first > window_hi) return 0.0;
  return mass_error_l2 * std::sqrt(static_cast<double>(window_hi - first + 1));
}

double DiscretePld::delta(double epsilon) const {
  double d = infinity_mass;
  for (std::size_t j = 0; j < mass.size(); ++j) {
    const double l = static_cast<double>(offset + static_cast<std::int64_t>(j)) * h;
    if (l > epsilon && mass[j] > 0.0) d += mass[j] * -std::expm1(epsilon - l);
  }
  return std::min(d + error_charge(epsilon), 1.0);
}

double DiscretePld::epsilon(double target) const {
  if (infinity_mass >= target) return kInf;
  // Walk down the grid: on [l_k, l_{k+1}) delta(eps) = A - e^{eps - l_k} C_k + charge_k, with
  // A the mass above l_k (incl. +inf), C_k = sum_{j > k} m_j e^{l_k - l_j} <= A (kept
  // relative to l_k so that e^{loss} never overflows for losses in the thousands) and
  // charge_k = error_charge on the cell (the window points above l_k: constant on the cell,
  // it drops at l_{k+1}, so the crossing is capped there). The walk starts at the window's
  // top when the mass error is charged: the true masses may be non-zero up to there.
  const bool charged = mass_error_l2 > 0.0 && window_hi >= window_lo;
  const std::int64_t mass_top = offset + static_cast<std::int64_t>(mass.size()) - 1;
  const std::int64_t top = charged ? std::max(mass_top, window_hi) : mass_top;
  const std::int64_t bottom = charged ? std::min(offset, window_lo) : offset;
  auto charge_above = [&](std::int64_t k) {  // window points with index > k
    if (!charged) return 0.0;
    const std::int64_t first = std::max(k + 1, window_lo);
    return first > window_hi ? 0.0 : mass_error_l2 * std::sqrt(static_cast<double>(window_hi - first + 1));
  };
  const double e_h = std::exp(-h);
  double a = infinity_mass, c = 0.0;
  for (std::int64_t k = top; k >= bottom; --k) {
    const double l = static_cast<double>(k) * h;
    const double charge = charge_above(k);
    if (a - c + charge >= target) {
      const double cap = l + h;  // delta at l_{k+1} was below the target (checked a step ago)
      if (!(c > 0.0)) return std::max(0.0, cap);
      return std::max(0.0, std::min(cap, l + std::log((a + charge - target) / c)));
    }
    const std::int64_t j = k - offset;
    const double m = j >= 0 && j < static_cast<std::int64_t>(mass.size()) ? mass[static_cast<std::size_t>(j)] : 0.0;
    a += m;
    c = (c + m) * e_h;  // now relative to l_{k-1} = l_k - h
  }
  const double charge = charge_above(bottom - 1);
  if (a + charge <= target) return 0.0;
  const double l_below = static_cast<double>(bottom - 1) * h;
  if (!(c > 0.0)) return std::max(0.0, l_below + h);
  return std::max(0.0, std::min(l_below + h, l_below + std::log((a + charge - target) / c)));
}

DiscretePld compose(const std::vector<std::pair<const DiscretePld*, std::int64_t>>& parts, double tail,
                    std::size_t max_points) {
  if (parts.empty()) throw std::invalid_argument("compose: no parts");
  const double h = parts.front().first->h;
  for (const auto& [p, c] : parts) {
    if (p->h != h) throw std::invalid_argument("compose: parts on different grids");
    if (c < 1) throw std::invalid_argument("compose: counts must be >= 1");
  }
  for (const auto& [p, c] : parts)
    if (p->mass_error_l2 > 0.0) throw std::invalid_argument("compose: parts must be exact PLDs (not composed ones)");
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

  // Circular convolution: product of the transforms, each raised to its count. Beside it, a
  // bound on the l2 error of the result (pld.h). X_ik, the exact transform of part i at
  // frequency k, is computed with an error |e_ik| <= eps_i = (L eta (1 + 2 L eta) + u)
  // ||x_i||_1: at each of the L stages, the butterflies that feed output k have inputs whose
  // moduli sum to at most ||x_i||_1, each adds at most eta (|a| + |b|) (Higham 2002, Sec. 24.1,
  // butterfly_error) and the later stages pass it on with unit-modulus twiddles;
  // u ||x_i||_1 more for the rounding of the bins' sums. With A_ik = |X_hat_ik| + eps_i (>= both
  // |X_ik| and |X_hat_ik|), the mean-value bound for a product of C factors gives
  // |Y_hat_k - Y_k| <= prod_j A_jk^c_j (sum_i c_i eps_i / A_ik) before rounding; pow(z, c) =
  // polar(exp(c ln|z|), c arg z) in libstdc++ rounds to a relative (c (4 + 3 pi) + 6) u plus
  // u / e absolute (c |ln|z|| |z|^c <= 1/e), a product to 2 sqrt 2 u.
  const double rho = fft_relative_error(n), u = kUnitRoundoff, sqrt_n = std::sqrt(static_cast<double>(n));
  const double l_eta = std::log2(static_cast<double>(n)) * butterfly_error();
  std::vector<std::complex<double>> acc(n, {1.0, 0.0}), x(n);
  std::vector<double> log_amplitude(n, 0.0), relative(n, 0.0);
  double round_relative = 0.0, absolute_round = 0.0, modulus = 0.0, total_count = 0.0;
  for (const auto& [p, c] : parts) {
    std::fill(x.begin(), x.end(), std::complex<double>(0.0, 0.0));
    double l1 = 0.0;
    for (std::size_t j = 0; j < p->mass.size(); ++j) {
      x[static_cast<std::size_t>(positive_mod(p->offset + static_cast<std::int64_t>(j), nn))] += p->mass[j];
      l1 += std::abs(p->mass[j]);
    }
    l1 *= 1.0 + 2.0 * static_cast<double>(p->mass.size()) * u;  // the sum's own rounding
    const double eps_i = (l_eta * (1.0 + 2.0 * l_eta) + u) * l1;
    modulus = std::max(modulus, l1 + eps_i);
    detail::fft(x, false);
    const double cd = static_cast<double>(c);
    for (std::size_t k = 0; k < n; ++k) {
      const double amplitude = std::abs(x[k]) + eps_i;
      log_amplitude[k] += cd * std::log(amplitude);
      relative[k] += cd * eps_i / amplitude;
      acc[k] *= c == 1 ? x[k] : std::pow(x[k], cd);
    }
    round_relative += u * (c == 1 ? 3.0 : cd * (4.0 + 3.0 * M_PI) + 9.0);
    if (c != 1) absolute_round += u / std::exp(1.0);
    total_count += cd;
  }
  double y_error_sq = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const double bound = std::exp(log_amplitude[k]) * (relative[k] + round_relative);
    y_error_sq += bound * bound;
  }
  // pow's absolute term, times the other factors' moduli (<= M each), in l2 over the n k's
  const double growth = std::exp(total_count * std::log(std::max(modulus, 1.0)));
  const double y_error = std::sqrt(y_error_sq) + absolute_round * growth * sqrt_n;
  const double spectrum_l2 = l2_norm(acc);
  detail::fft(acc, true);

  DiscretePld out;
  out.h = h;
  out.offset = a;
  // The inverse transform's own rounding adds rho sqrt(n) ||Y_hat||_2; dividing by n (exact, a
  // power of two) gives the l2 error of the masses; doubled for the slack of the constants. A
  // non-finite bound (absurd counts) charges everything: delta 1 in the window.
  out.mass_error_l2 = 2.0 * (y_error + rho * spectrum_l2) / sqrt_n;
  if (!std::isfinite(out.mass_error_l2)) out.mass_error_l2 = 1.0;
  out.window_lo = a;
  out.window_hi = a + nn - 1;
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
