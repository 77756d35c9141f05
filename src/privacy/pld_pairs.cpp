// The one-step dominating pairs (pld.h): their exact hockey-stick curves and their
// pessimistic discretisation. The Gaussian mixtures are expressed through the remove pair
//   R = (P, Q) = ((1 - q) N(0,1) + q N(mu,1), N(0,1)),
// whose loss L_R(y) = ln(1 - q + q e^{mu y - mu^2/2}) increases in y, so the masses of a loss
// interval are normal-CDF differences over a y interval. The count mixture is a weighted sum
// of Gaussian pairs (a Gaussian pair's loss is itself normal), the Laplace pair's masses are
// differences of exponentials.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "dpgnn/privacy/pld.h"
#include "hypergeometric.h"
#include "normal.h"

namespace dpgnn::privacy {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// e^{loss} must stay finite in the split and in the queries.
constexpr double kMaxLoss = 600.0;

// The y at which L_R(y) = eps (-inf when every y has a larger loss, eps <= ln(1 - q)).
double y_of_loss(double q, double mu, double eps) {
  const double r = std::expm1(eps) / q;  // e^{mu y - mu^2/2} = 1 + (e^eps - 1)/q
  if (!(r > -1.0)) return -kInf;
  return (std::log1p(r) + 0.5 * mu * mu) / mu;
}

double loss_of_y(double q, double mu, double y) {
  const double t = std::log(q) + mu * y - 0.5 * mu * mu;
  if (q >= 1.0) return t;
  const double base = std::log1p(-q);
  const double m = std::max(base, t);
  return m + std::log(std::exp(base - m) + std::exp(t - m));
}

constexpr double kUnitRoundoff = 0x1p-53;

// A probability mass as computed, with a bound on its rounding error.
struct Mass {
  double value = 0.0, error = 0.0;
};

// P- and Q-mass of R on the y interval (y1, y2].
std::pair<Mass, Mass> masses(double q, double mu, double y1, double y2) {
  const double p = (1.0 - q) * detail::normal_mass(y1, y2) + q * detail::normal_mass(y1 - mu, y2 - mu);
  const double p_error = (1.0 - q) * detail::normal_mass_error(y1, y2) +
                         q * detail::normal_mass_error(y1 - mu, y2 - mu) + 3.0 * kUnitRoundoff * p;
  return {{p, p_error}, {detail::normal_mass(y1, y2), detail::normal_mass_error(y1, y2)}};
}

// delta of R: q [Phi(mu - y) - e^{mu y - mu^2/2} Phi(-y)] at y = y_of_loss(eps), 1 - e^eps
// below the smallest loss (the hockey-stick divergence on the half-line {L_R > eps}, where its integrand is positive).
double remove_delta(double q, double mu, double eps) {
  const double y = y_of_loss(q, mu, eps);
  if (y == -kInf) return -std::expm1(eps);
  const double first = detail::normal_cdf(mu - y);
  const double second = std::exp(mu * y - 0.5 * mu * mu + detail::log_normal_cdf(-y));
  return std::max(0.0, q * (first - second));
}

// delta of R reversed: H_{e^eps}(Q || P) = 1 - e^eps + e^eps H_{e^-eps}(P || Q) (take the
// complement of the test set; it is the relation between f and f^{-1}), evaluated directly on {L_R < -eps} = {y < y_of_loss(-eps)} to avoid the cancellation:
// Phi(t) - e^eps ((1 - q) Phi(t) + q Phi(t - mu)) = e^eps q [e^{mu t - mu^2/2} Phi(t) - Phi(t - mu)].
double add_delta(double q, double mu, double eps) {
  const double t = y_of_loss(q, mu, -eps);
  if (t == -kInf) return 0.0;  // eps >= -ln(1 - q): the add loss never exceeds eps
  const double first = std::exp(mu * t - 0.5 * mu * mu + detail::log_normal_cdf(t));
  const double second = detail::normal_cdf(t - mu);
  return std::max(0.0, std::exp(eps) * q * (first - second));
}

// Smallest y whose upper R-tail (P-mass above it) is <= tail.
double y_top(double q, double mu, double tail) {
  double lo = 0.0, hi = mu + 40.0;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    const double above = (1.0 - q) * detail::normal_cdf(-mid) + q * detail::normal_cdf(mu - mid);
    if (above > tail) lo = mid; else hi = mid;
  }
  return hi;
}

// Adds P-mass p with Q-mass qm, lying in the cell [i h, (i + 1) h], to the two end points,
// keeping the mass and E[e^{-L}] (Doroshenko et al. 2022, "connect the dots"): the upper
// point gets (p - qm e^{i h}) / (1 - e^{-h}).
// Rounding is made pessimistic (pld.h): the P-mass is raised and the Q-mass lowered by their
// error bounds, and the upper share is raised by its own rounding bound ((8 + |i h|) u p / (1 -
// e^{-h}): q e^{ih} <= p in the cell, e^{ih} carries the rounding of i h) and by 2^-30 p,
// which covers the mass that rounded cell edges move across a boundary (of order
// (mu |dy|)^2 / h^2 p with |dy| ~ 1e-14, far below it for grids h >= 1e-8). More P-mass, and
// P-mass moved to a higher loss, only raise the hockey-stick curve.
void split_into(std::vector<double>& out, std::int64_t offset, std::int64_t i, double h, Mass p, Mass qm) {
  const double p_hi = p.value + p.error, q_lo = std::max(0.0, qm.value - qm.error);
  if (!(p_hi > 0.0)) return;
  const double l = static_cast<double>(i) * h, width = -std::expm1(-h);
  double up = (p_hi - q_lo * std::exp(l)) / width;
  up = std::max(0.0, up) + (8.0 + std::abs(l)) * kUnitRoundoff * p_hi / width + 0x1p-30 * p_hi;
  up = std::min(p_hi, up);
  out[static_cast<std::size_t>(i - offset)] += p_hi - up;
  out[static_cast<std::size_t>(i + 1 - offset)] += up;
}

// An exactly computed mass's pessimistic (upper) value.
double upper(Mass m) { return m.value + m.error; }

// The x >= 0 with Phi(-x) <= tail (bisection).
double normal_tail_point(double tail) {
  double lo = 0.0, hi = 40.0;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (detail::normal_cdf(-mid) > tail ? lo : hi) = mid;
  }
  return hi;
}

// The count mixture's weights P[k], k = first, first + 1, ... (hypergeometric.h).
detail::HypergeometricLogPmf count_weights(const MixturePair& pair) {
  if (pair.n < 1 || pair.m < 1 || pair.m > pair.n || pair.g < 1 || pair.g > pair.n)
    throw std::invalid_argument("count mixture: need 1 <= m <= n and 1 <= g <= n");
  return detail::hypergeometric_log_pmf(pair.n, pair.g, pair.m);
}

// Components below this weight go to the +inf atom whole (pessimistic, and cheap).
constexpr double kNegligibleWeight = 1e-30;

double count_mixture_delta(const MixturePair& pair, double eps) {
  const auto w = count_weights(pair);
  double delta = 0.0;
  for (std::size_t j = 0; j < w.log_p.size(); ++j) {
    const double k = static_cast<double>(w.first + static_cast<std::int64_t>(j));
    if (k > 0.0) delta += std::exp(w.log_p[j]) * gdp_delta(k * pair.mu, eps);
  }
  return delta;
}

// Losses above eps are y > (1 + eps / mu) / 2 (in units of the scale): for |eps| < mu,
// delta = P[.] - e^eps Q[.] = 1 - e^{(eps - mu)/2}; every loss is above eps <= -mu.
double laplace_delta(double mu, double eps) {
  if (eps >= mu) return 0.0;
  if (eps <= -mu) return -std::expm1(eps);
  return -std::expm1(0.5 * (eps - mu));
}

// sum_k P[k] (N(k mu,1), N(0,1)): the Gaussian pair with shift s has loss s^2/2 + s x under P
// and -s^2/2 + s x under Q, x ~ N(0,1). Each component covers losses within t = its tail
// point of its mean; its P-mass below goes to the first grid point above that range's lower end (rounded up),
// above to +inf; k = 0 is an atom at loss 0 with equal P and Q mass.
DiscretePld discretise_count_mixture(const MixturePair& pair, double h, double tail) {
  const auto w = count_weights(pair);
  const double t = normal_tail_point(tail);
  const double s_max = static_cast<double>(w.first + static_cast<std::int64_t>(w.log_p.size()) - 1) * pair.mu;
  if (!(0.5 * s_max * s_max + s_max * t < kMaxLoss)) throw std::domain_error("discretise: losses beyond e^600");
  DiscretePld out;
  out.h = h;
  // The lowest loss covered, min over 0 <= s <= s_max of s^2/2 - s t (at s = min(t, s_max)).
  const double s_low = std::min(t, s_max);
  out.offset = std::min<std::int64_t>(0, static_cast<std::int64_t>(std::floor((0.5 * s_low * s_low - s_low * t) / h)));
  const std::int64_t top = static_cast<std::int64_t>(std::ceil((0.5 * s_max * s_max + s_max * t) / h)) + 1;
  out.mass.assign(static_cast<std::size_t>(std::max<std::int64_t>(top, 1) - out.offset + 1), 0.0);
  for (std::size_t j = 0; j < w.log_p.size(); ++j) {
    const double weight = std::exp(w.log_p[j]);
    // exp's rounding, magnified by |ln P[k]| (and the log-pmf's own rounding, a few u of it)
    const double weight_rel = (4.0 + 2.0 * std::abs(w.log_p[j])) * kUnitRoundoff;
    const std::int64_t k = w.first + static_cast<std::int64_t>(j);
    if (weight < kNegligibleWeight) {
      if (k > 0) out.infinity_mass += weight * (1.0 + weight_rel);
      continue;
    }
    if (k == 0) {
      out.mass[static_cast<std::size_t>(-out.offset)] += weight * (1.0 + weight_rel);
      continue;
    }
    const double s = static_cast<double>(k) * pair.mu, half = 0.5 * s * s;
    const double lo = half - s * t, hi = half + s * t;
    const std::int64_t i_lo = static_cast<std::int64_t>(std::floor(lo / h));
    const std::int64_t i_hi = static_cast<std::int64_t>(std::ceil(hi / h));
    for (std::int64_t i = i_lo; i < i_hi; ++i) {
      const double a = std::max(lo, static_cast<double>(i) * h), b = std::min(hi, static_cast<double>(i + 1) * h);
      const double pa = (a - half) / s, pb = (b - half) / s, qa = (a + half) / s, qb = (b + half) / s;
      const double p = weight * detail::normal_mass(pa, pb), qm = weight * detail::normal_mass(qa, qb);
      split_into(out.mass, out.offset, i, h, {p, weight * detail::normal_mass_error(pa, pb) + weight_rel * p},
                 {qm, weight * detail::normal_mass_error(qa, qb) + weight_rel * qm});
    }
    const double tail_mass = weight * (detail::normal_cdf(-t) + detail::normal_cdf_error(-t)) * (1.0 + weight_rel);
    out.mass[static_cast<std::size_t>(i_lo + 1 - out.offset)] += tail_mass;  // >= lo: up
    out.infinity_mass += tail_mass;
  }
  return out;
}

// Lap(mu, 1) vs Lap(0, 1): for y in (0, mu) the loss is 2y - mu; y <= 0 is an atom at -mu
// (P-mass e^{-mu}/2, Q-mass 1/2), y >= mu an atom at mu (P-mass 1/2, Q-mass e^{-mu}/2). A loss
// interval (a, b] of the middle part is y in ((a + mu)/2, (b + mu)/2], with P-mass
// (e^{y2 - mu} - e^{y1 - mu})/2 and Q-mass (e^{-y1} - e^{-y2})/2.
DiscretePld discretise_laplace(double mu, double h) {
  if (!(mu < kMaxLoss)) throw std::domain_error("discretise: losses beyond e^600");
  DiscretePld out;
  out.h = h;
  out.offset = static_cast<std::int64_t>(std::floor(-mu / h));
  const std::int64_t i_top = static_cast<std::int64_t>(std::floor(mu / h));
  out.mass.assign(static_cast<std::size_t>(i_top + 1 - out.offset + 1), 0.0);
  for (std::int64_t i = out.offset; i <= i_top; ++i) {
    const double a = std::max(-mu, static_cast<double>(i) * h), b = std::min(mu, static_cast<double>(i + 1) * h);
    if (!(a < b)) continue;
    const double y1 = 0.5 * (a + mu), y2 = 0.5 * (b + mu), width = -std::expm1(-(y2 - y1));
    const double p = 0.5 * std::exp(y2 - mu) * width, qm = 0.5 * std::exp(-y1) * width;
    // exp, expm1 and the products within a few u each, the edges' rounding magnified by mu
    const double rel = (8.0 + 2.0 * mu) * kUnitRoundoff;
    split_into(out.mass, out.offset, i, h, {p, rel * p}, {qm, rel * qm});
  }
  const double atom_rel = (4.0 + mu) * kUnitRoundoff, e_mu = std::exp(-mu);
  split_into(out.mass, out.offset, out.offset, h, {0.5 * e_mu, atom_rel * e_mu}, {0.5, 0.0});
  split_into(out.mass, out.offset, i_top, h, {0.5, 0.0}, {0.5 * e_mu, atom_rel * e_mu});
  return out;
}

}  // namespace

bool MixturePair::operator<(const MixturePair& o) const {
  return std::tie(kind, q, mu, n, m, g) < std::tie(o.kind, o.q, o.mu, o.n, o.m, o.g);
}

double pair_delta(const MixturePair& pair, double eps) {
  switch (pair.kind) {
    case PairKind::kRemove: return remove_delta(pair.q, pair.mu, eps);
    case PairKind::kAdd: return add_delta(pair.q, pair.mu, eps);
    case PairKind::kSymmetric:
      // C_q(f) = min(f_q, f_q^{-1})**: its conjugate, hence its delta curve, is the larger of
      // the two (convex conjugation turns a minimum into a maximum and ignores the hull).
      if (pair.q >= 1.0) return gdp_delta(pair.mu, eps);
      return std::max(remove_delta(pair.q, pair.mu, eps), add_delta(pair.q, pair.mu, eps));
    case PairKind::kCountMixture: return count_mixture_delta(pair, eps);
    case PairKind::kLaplace: return laplace_delta(pair.mu, eps);
  }
  throw std::logic_error("pair_delta: unknown kind");
}

DiscretePld discretise(const MixturePair& pair, double h, double tail) {
  const double q = pair.q, mu = pair.mu;
  if (!(q > 0.0 && q <= 1.0) || !(mu > 0.0) || !std::isfinite(mu) || !(h > 0.0))
    throw std::invalid_argument("discretise: need 0 < q <= 1, mu > 0, h > 0");
  if (pair.kind == PairKind::kCountMixture) return discretise_count_mixture(pair, h, tail);
  if (pair.kind == PairKind::kLaplace) return discretise_laplace(mu, h);
  if (pair.kind != PairKind::kSymmetric && q >= 1.0)
    throw std::invalid_argument("discretise: q = 1 is the plain Gaussian (kSymmetric)");
  const double top_loss = loss_of_y(q, mu, y_top(q, mu, tail));
  if (!(top_loss < kMaxLoss)) throw std::domain_error("discretise: losses beyond e^600");
  const std::int64_t i_top = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(top_loss / h)));
  // Cells of R's loss: (i h, (i+1) h] for i in [i_lo, i_top), y at each edge.
  const std::int64_t i_lo = pair.kind == PairKind::kSymmetric
                                ? 0
                                : static_cast<std::int64_t>(std::floor(std::log1p(-q) / h));
  std::vector<Mass> p_cell, q_cell;
  double y_prev = y_of_loss(q, mu, static_cast<double>(i_lo) * h);
  for (std::int64_t i = i_lo; i < i_top; ++i) {
    const double y = y_of_loss(q, mu, static_cast<double>(i + 1) * h);
    const auto [p, qm] = masses(q, mu, y_prev, y);
    p_cell.push_back(p);
    q_cell.push_back(qm);
    y_prev = y;
  }
  const double y_end = y_prev;
  const double p_above = (1.0 - q) * (detail::normal_cdf(-y_end) + detail::normal_cdf_error(-y_end)) +
                         q * (detail::normal_cdf(mu - y_end) + detail::normal_cdf_error(mu - y_end));
  const double q_above = detail::normal_cdf(-y_end) + detail::normal_cdf_error(-y_end);

  DiscretePld out;
  out.h = h;
  const std::size_t cells = p_cell.size();
  switch (pair.kind) {
    case PairKind::kRemove:
      // Losses in [ln(1 - q), i_top h]; the P-mass above goes to +inf.
      out.offset = i_lo;
      out.mass.assign(cells + 1, 0.0);
      for (std::size_t k = 0; k < cells; ++k)
        split_into(out.mass, out.offset, i_lo + static_cast<std::int64_t>(k), h, p_cell[k], q_cell[k]);
      out.infinity_mass = p_above;
      break;
    case PairKind::kAdd:
      // L = -L_R, P and Q exchanged: cell (i h, (i+1) h] of R is [-(i+1) h, -i h) here with
      // P-mass q_cell, Q-mass p_cell. R's upper tail is this pair's lower tail: its P-mass
      // q_above is rounded up to the lowest point; nothing is infinite.
      out.offset = -i_top;
      out.mass.assign(static_cast<std::size_t>(i_top - i_lo) + 1, 0.0);
      for (std::size_t k = 0; k < cells; ++k)
        split_into(out.mass, out.offset, -(i_lo + static_cast<std::int64_t>(k)) - 1, h, q_cell[k], p_cell[k]);
      out.mass[0] += q_above;
      break;
    case PairKind::kCountMixture:
    case PairKind::kLaplace: break;  // returned above
    case PairKind::kSymmetric: {
      // Dong, Roth & Su 2022 (the form of C_p(f) after Thm 4.2, f symmetric): f_q on
      // [0, x*], a segment of slope -1 (an atom of loss 0), then f_q^{-1}. In losses: R's
      // losses > 0, their mirror image with P and Q exchanged, and the atom at 0 with mass
      // 1 - P_R[L > 0] - Q_R[L > 0] = (1 - q) (Phi(mu/2) - Phi(-mu/2)).
      out.offset = -i_top;
      out.mass.assign(static_cast<std::size_t>(2 * i_top) + 1, 0.0);
      for (std::size_t k = 0; k < cells; ++k) {
        const std::int64_t i = static_cast<std::int64_t>(k);
        split_into(out.mass, out.offset, i, h, p_cell[k], q_cell[k]);
        split_into(out.mass, out.offset, -i - 1, h, q_cell[k], p_cell[k]);
      }
      out.mass[static_cast<std::size_t>(-out.offset)] +=
          (1.0 - q) * upper({detail::normal_mass(-0.5 * mu, 0.5 * mu), detail::normal_mass_error(-0.5 * mu, 0.5 * mu)});
      out.mass[0] += q_above;
      out.infinity_mass = p_above;
      // The form above needs delta_remove >= delta_add for eps >= 0 (f_q below f_q^{-1} left
      // of the fixed point); checked here so that a violation can never pass silently.
      if (q < 1.0)
        for (double eps : {0.0, 0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0})
          if (add_delta(q, mu, eps) > remove_delta(q, mu, eps) * (1.0 + 1e-9) + 1e-300)
            throw std::logic_error("discretise: add pair above remove pair at eps >= 0; C_q form invalid");
      break;
    }
  }
  return out;
}

}  // namespace dpgnn::privacy
