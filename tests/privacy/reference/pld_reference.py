#!/usr/bin/python3
"""Independent reference values for dpgnn's PLD accountant (tests/privacy/test_pld*.cpp).

Written separately from src/privacy (numpy/scipy, a different algorithm): never
regenerate pld_reference.csv from dpgnn's output. Run: /usr/bin/python3 pld_reference.py > pld_reference.csv  (about 30 min on one core, < 4 GB)

Conventions (docs/privacy.md section 1): mu = 1 / z for every Gaussian scheme
(wor: sensitivity 2C replace-one; poisson, gaussian: sensitivity C add/remove).

Methods (column `method`):
  closed   T-fold Gaussian = mu-GDP with mu = sqrt(T)/z; delta(eps) = Phi(-eps/mu + mu/2)
           - e^eps Phi(-eps/mu - mu/2) (Balle & Wang 2018, Thm 8; Dong, Roth & Su 2022, Cor. 2.13).
  quad     T = 1: hockey-stick divergence integral(max(p - e^eps q, 0)) by scipy quad;
           wor: the larger of the two directions (Dong, Roth & Su 2022, Thm 4.2:
           C_p(f) = min(f_p, f_p^-1)**, whose delta curve is the max of theirs).
  grid     T-fold composition of privacy-loss distributions discretised on a grid of
           width h with losses rounded UP (eps_hi, pessimistic) and DOWN (eps_lo,
           optimistic), bin masses exact from normal CDFs; the exact value lies in
           [eps_lo, eps_hi]. wor uses the symmetric PLD of C_p(G_mu): the remove pair's
           losses > 0, their mirror image (mass e^-l at -l) and an atom at 0 (valid as
           delta_remove >= delta_add for eps >= 0, asserted below on a grid).
Output columns: scheme,q,z,steps,delta,method,eps_lo,eps_hi
"""
import math
import sys

import numpy as np
from scipy import integrate, optimize
from scipy.stats import norm


def gdp_delta(eps, mu):
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def eps_from_delta(delta_of, delta, hi=200.0):
    if delta_of(0.0) <= delta:
        return 0.0
    return optimize.brentq(lambda e: delta_of(e) - delta, 0.0, hi, xtol=1e-13, rtol=1e-13)


# ---- T = 1 by direct integration -------------------------------------------------------
def hockey_quad(p_pdf, q_pdf, eps, mu):
    f = lambda y: max(p_pdf(y) - math.exp(eps) * q_pdf(y), 0.0)
    pts = np.linspace(-12, 12 + mu, 49)
    total = 0.0
    for a, b in zip(pts[:-1], pts[1:]):
        total += integrate.quad(f, a, b, epsabs=1e-16, epsrel=1e-12, limit=200)[0]
    return total


def mix_pdf(q, mu):
    return lambda y: (1 - q) * norm.pdf(y) + q * norm.pdf(y - mu)


def delta_quad(scheme, q, mu, eps):
    base = norm.pdf
    mix = mix_pdf(q, mu)
    remove = hockey_quad(mix, base, eps, mu)
    add = hockey_quad(base, mix, eps, mu)
    if scheme == "gaussian":
        return hockey_quad(lambda y: norm.pdf(y - mu), base, eps, mu)
    if scheme == "poisson_remove":
        return remove
    if scheme == "poisson_add":
        return add
    return max(remove, add)  # wor, poisson (both directions, the worse)


# ---- fine-grid composition ---------------------------------------------------------------
def remove_loss_bins(q, mu, h, L_max):
    """Bins of the remove pair (P = mixture, Q = N(0,1)), L = log(1 - q + q e^{mu y - mu^2/2})
    increasing in y. Returns k (bin index: L in (k h, (k+1) h]), P-mass, Q-mass, and the
    P- and Q-mass above L_max."""
    L_min = math.log1p(-q) if q < 1 else -1e9
    k_lo = math.floor(max(L_min, -L_max) / h)
    k_hi = math.ceil(L_max / h)
    ks = np.arange(k_lo, k_hi)
    edges = np.arange(k_lo, k_hi + 1) * h  # loss edges
    # y at loss l: e^{mu y - mu^2/2} = (e^l - 1 + q)/q
    with np.errstate(divide="ignore", invalid="ignore"):
        arg = (np.expm1(edges) + q) / q
        y = np.where(arg > 0, (np.log(np.where(arg > 0, arg, 1.0)) + mu * mu / 2) / mu, -np.inf)
    P_sf = (1 - q) * norm.sf(y) + q * norm.sf(y - mu)
    Q_sf = norm.sf(y)
    P_mass = P_sf[:-1] - P_sf[1:]
    Q_mass = Q_sf[:-1] - Q_sf[1:]
    return ks, P_mass, Q_mass, P_sf[-1], Q_sf[-1], 1.0 - P_sf[0]


class Pmf:
    """Masses on losses (offset + i) * h, plus mass at +inf."""

    def __init__(self, offset, mass, inf):
        self.offset, self.mass, self.inf = offset, np.asarray(mass, dtype=float), inf

    def delta(self, eps, h):
        l = (self.offset + np.arange(len(self.mass))) * h
        sel = l > eps
        return self.inf + float(np.sum(self.mass[sel] * -np.expm1(eps - l[sel])))

    def eps(self, delta, h):
        l_top = (self.offset + len(self.mass)) * h
        if self.inf >= delta:
            return math.inf
        return eps_from_delta(lambda e: self.delta(e, h), delta, hi=max(l_top, 1.0))


def build_pmf(scheme, q, mu, h, pessimistic, L_max=None):
    if L_max is None:
        # loss at y = mu + 11 (P-mass above: Phi(-11) ~ 2e-28, sent to +inf when pessimistic)
        y = mu + 11.0
        L_max = math.log1p(-q + q * math.exp(mu * y - mu * mu / 2)) if q < 1 else mu * y - mu * mu / 2
    ks, Pm, Qm, P_top, Q_top, P_below = remove_loss_bins(q, mu, h, L_max)
    up = 1 if pessimistic else 0
    if scheme == "poisson_remove":
        idx = ks + up
        mass = Pm.copy()
        inf = P_top if pessimistic else 0.0
        if not pessimistic:
            idx = np.append(idx, ks[-1] + 1)
            mass = np.append(mass, P_top)
        return to_pmf(idx, mass, inf)
    if scheme == "poisson_add":
        # add pair: P = N(0,1), Q = mixture; loss = -L_remove, P-mass = Q_remove-mass
        idx = -(ks + 1) + up
        mass = Qm.copy()
        # the top remove bins (very negative add losses): P-mass above L_max goes to the bottom
        idx = np.append(idx, idx.min() - 1 + up)
        mass = np.append(mass, Q_top)
        return to_pmf(idx, mass, 0.0)
    if scheme == "wor":
        pos = ks >= 0
        idx_pos = ks[pos] + up                  # losses in (k h, (k+1) h]
        idx_neg = -(ks[pos] + 1) + up           # mirror: (-(k+1) h, -k h]
        m_pos, m_neg = Pm[pos], Qm[pos]
        atom = 1.0 - m_pos.sum() - m_neg.sum() - P_top - Q_top
        assert atom > -1e-12, atom
        idx = np.concatenate([idx_pos, idx_neg, [0, idx_neg.min() - 1 + up]])
        mass = np.concatenate([m_pos, m_neg, [max(atom, 0.0), Q_top]])
        inf = P_top if pessimistic else 0.0
        if not pessimistic:
            idx = np.append(idx, ks[-1] + 1)
            mass = np.append(mass, P_top)
        return to_pmf(idx, mass, inf)
    raise ValueError(scheme)


def to_pmf(idx, mass, inf):
    lo = int(idx.min())
    out = np.zeros(int(idx.max()) - lo + 1)
    np.add.at(out, (idx - lo).astype(int), mass)
    return Pmf(lo, out, inf)


def convolve(a, b, pessimistic, tail=1e-20):
    n = len(a.mass) + len(b.mass) - 1
    size = 1 << (n - 1).bit_length()
    c = np.fft.irfft(np.fft.rfft(a.mass, size) * np.fft.rfft(b.mass, size), size)[:n]
    c = np.maximum(c, 0.0)
    inf = 1.0 - (1.0 - a.inf) * (1.0 - b.inf)
    # trim negligible tails: the top into +inf (pessimistic) / dropped (optimistic),
    # the bottom moved up to the first kept loss (pessimistic) / dropped (optimistic)
    cs = np.cumsum(c)
    lo = int(np.searchsorted(cs, tail))
    rs = np.cumsum(c[::-1])
    hi = n - int(np.searchsorted(rs, tail))
    kept = c[lo:hi].copy()
    if pessimistic:
        kept[0] += c[:lo].sum()
        inf += c[hi:].sum()
    return Pmf(a.offset + b.offset + lo, kept, inf)


def compose(p, T, pessimistic):
    result, base = None, p
    while T:
        if T & 1:
            result = base if result is None else convolve(result, base, pessimistic)
        T >>= 1
        if T:
            base = convolve(base, base, pessimistic)
    return result


def grid_eps(scheme, q, z, T, delta, h):
    mu = 1.0 / z
    out = []
    for pess in (False, True):
        dirs = ["poisson_remove", "poisson_add"] if scheme == "poisson" else [scheme]
        e = max(compose(build_pmf(d, q, mu, h, pess), T, pess).eps(delta, h) for d in dirs)
        out.append(e)
    return out


def check_remove_dominates_add(q, mu):
    for eps in np.linspace(0.0, 5.0, 26):
        r = delta_quad("poisson_remove", q, mu, eps)
        a = delta_quad("poisson_add", q, mu, eps)
        assert r >= a - 1e-14, (q, mu, eps, r, a)


# Regimes where one step's loss spreads over ~q/z only (large z, small q), and a longer run.
MULTI_SMALL_LOSS = [("wor", 0.001, 5.0, 10, 1e-5, 1e-7), ("poisson", 0.004, 20.0, 10, 1e-7, 1e-7),
                    ("wor", 0.004, 20.0, 100, 1e-5, 2e-7)]
# Longer runs (T >= 1000) need a finer grid than this script's memory allows (~20 GB for
# T = 1000 at h = 2e-5): the tests check them against published values and RDP instead.


def main():
    w = sys.stdout.write
    w("scheme,q,z,steps,delta,method,eps_lo,eps_hi\n")
    fmt = lambda x: "%.10g" % x
    # closed-form Gaussian (full batches: T compositions of the plain Gaussian)
    for z, T, d in [(1.0, 1, 1e-5), (0.8, 10, 1e-5), (2.0, 100, 1e-5), (5.0, 1000, 1e-7),
                    (20.0, 14063, 1e-5), (50.0, 10000, 1e-5), (3.0, 500, 1e-7)]:
        mu = math.sqrt(T) / z
        e = eps_from_delta(lambda x: gdp_delta(x, mu), d)
        w(",".join(["gaussian", "1", fmt(z), str(T), fmt(d), "closed", fmt(e), fmt(e)]) + "\n")
    # one step of each pair by direct integration
    one_step = [("wor", 256 / 60000, 1.1), ("wor", 0.01, 0.8), ("wor", 0.1, 2.0), ("wor", 0.5, 1.0),
                ("poisson", 256 / 60000, 1.1), ("poisson", 0.01, 0.8), ("poisson", 0.1, 2.0)]
    for scheme, q, z in one_step:
        mu = 1.0 / z
        check_remove_dominates_add(q, mu)
        for d in (1e-5, 1e-7):
            e = eps_from_delta(lambda x: delta_quad(scheme, q, mu, x), d, hi=30.0)
            w(",".join([scheme, fmt(q), fmt(z), "1", fmt(d), "quad", fmt(e), fmt(e)]) + "\n")
    # fine-grid compositions with pessimistic / optimistic bounds
    multi = [("wor", 0.01, 0.8, 10, 1e-5, 2e-5), ("wor", 0.1, 2.0, 20, 1e-5, 2e-5),
             ("wor", 256 / 60000, 1.1, 100, 1e-5, 1e-5), ("wor", 0.05, 1.5, 50, 1e-7, 1e-5),
             ("poisson", 0.01, 0.8, 10, 1e-5, 2e-5), ("poisson", 0.1, 2.0, 20, 1e-5, 2e-5),
             ("poisson", 256 / 60000, 1.1, 100, 1e-5, 1e-5)] + MULTI_SMALL_LOSS
    for scheme, q, z, T, d, h in multi:
        lo, hi = grid_eps(scheme, q, z, T, d, h)
        w(",".join([scheme, fmt(q), fmt(z), str(T), fmt(d), "grid", fmt(lo), fmt(hi)]) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
