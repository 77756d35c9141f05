#!/usr/bin/python3
"""Independent reference values for the count-mixture (dpgnn, groupwor) and Laplace PLDs of
dpgnn's accountant (tests/privacy/test_pld_accountant.cpp, PldAccountant.GroupAndLaplace*).

Written separately from src/privacy (numpy/scipy; losses rounded to a grid instead of
dpgnn's "connect the dots" split): never regenerate the csv from dpgnn's output.
Run: /usr/bin/python3 pld_reference_groups.py > pld_reference_groups.csv  (a few minutes)

Pairs (docs/privacy.md, section 3a):
  laplace   one step = Lap(1/z, 1) vs Lap(0, 1). Loss under P: an atom at +1/z (mass 1/2),
            an atom at -1/z (mass e^{-1/z}/2), and 2y - 1/z for y in (0, 1/z) with density
            e^{y - 1/z}/2.
  count     dpgnn / groupwor: k ~ Hypergeometric(n, g, m) (scipy.stats.hypergeom), then the
            Gaussian pair with shift s = k/(g z), whose loss under P is N(s^2/2, s^2); k = 0 is
            an atom at loss 0.
T-fold compositions on a grid of width h with every loss rounded UP (eps_hi, pessimistic;
the P-mass above the grid to +inf) and DOWN (eps_lo, optimistic): the exact epsilon lies in
[eps_lo, eps_hi].
Output columns: scheme,n,m,g,z,steps,delta,eps_lo,eps_hi
"""
import math
import os
import sys

import numpy as np
from scipy.stats import hypergeom, norm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pld_reference import Pmf, compose, to_pmf  # noqa: E402  (the grid machinery only)


def laplace_pmf(z, h, pessimistic):
    a = 1.0 / z
    # middle part: loss l = 2y - a, y in (0, a); fine sub-bins of the loss, mass exact
    edges = np.linspace(-a, a, int(math.ceil(2 * a / h)) * 8 + 1)
    y = (edges + a) / 2
    mass = 0.5 * (np.exp(y[1:] - a) - np.exp(y[:-1] - a))
    lo_edge, hi_edge = edges[:-1], edges[1:]
    idx = np.ceil(hi_edge / h) if pessimistic else np.floor(lo_edge / h)
    idx = np.concatenate([idx, [math.ceil(a / h) if pessimistic else math.floor(a / h),
                                math.ceil(-a / h) if pessimistic else math.floor(-a / h)]])
    mass = np.concatenate([mass, [0.5, 0.5 * math.exp(-a)]])
    return to_pmf(idx.astype(np.int64), mass, 0.0)


def count_pmf(n, m, g, z, h, pessimistic, t=11.0):
    ks = np.arange(0, min(g, m) + 1)
    w = hypergeom(n, g, m).pmf(ks)
    idx_all, mass_all, inf = [np.array([0])], [np.array([w[0]])], 0.0
    for k in ks[1:]:
        if w[k] < 1e-40:
            inf += w[k] if pessimistic else 0.0
            continue
        s = k / (g * z)
        lo, hi = s * s / 2 - t * s, s * s / 2 + t * s
        e = np.arange(math.floor(lo / h), math.ceil(hi / h) + 1) * h
        cdf = norm.cdf((e - s * s / 2) / s)
        mass = w[k] * np.diff(cdf)
        idx = np.arange(math.floor(lo / h), math.ceil(hi / h)) + (1 if pessimistic else 0)
        below, above = w[k] * cdf[0], w[k] * norm.sf((e[-1] - s * s / 2) / s)
        idx_all += [idx, [idx[0]]]
        mass_all += [mass, [below]]
        if pessimistic:
            inf += above
    return to_pmf(np.concatenate(idx_all).astype(np.int64), np.concatenate(mass_all), inf)


def eps_interval(make, T, delta, h):
    return [compose(make(h, p), T, p).eps(delta, h) for p in (False, True)]


CASES = [  # scheme, n, m, g, z, steps, delta, h
    ("laplace", 0, 0, 0, 2.0, 10, 1e-5, 1e-4),
    ("laplace", 0, 0, 0, 8.0, 500, 1e-5, 1e-4),
    ("laplace", 0, 0, 0, 20.0, 100, 1e-7, 2e-5),
    ("groupwor", 20000, 256, 40, 0.8, 1, 1e-5, 1e-5),
    ("groupwor", 20000, 256, 40, 2.0, 100, 1e-5, 2e-5),
    ("dpgnn", 5000, 200, 13, 1.0, 10, 1e-5, 2e-5),
    ("dpgnn", 5000, 200, 13, 4.0, 300, 1e-7, 2e-5),
    ("groupwor", 2708, 677, 12, 3.0, 50, 1e-5, 2e-5),
]


def main():
    w = sys.stdout.write
    w("scheme,n,m,g,z,steps,delta,eps_lo,eps_hi\n")
    fmt = lambda x: "%.10g" % x
    for scheme, n, m, g, z, T, d, h in CASES:
        if scheme == "laplace":
            make = lambda hh, p: laplace_pmf(z, hh, p)
        else:
            make = lambda hh, p: count_pmf(n, m, g, z, hh, p)
        lo, hi = eps_interval(make, T, d, h)
        w(",".join([scheme, str(n), str(m), str(g), fmt(z), str(T), fmt(d), fmt(lo), fmt(hi)]) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
