#!/usr/bin/python3
"""The discrete Gaussian's (epsilon, delta) curve against the continuous Gaussian's.

dpgnn draws exact discrete Gaussian noise (Canonne, Kamath & Steinke 2020, "CKS20") and its
PLD accountant composes the continuous Gaussian's privacy-loss pair (docs/privacy.md,
sections 3a and "The Gaussian noise"). This script measures how far apart the two hockey-stick
curves are for one coordinate whose value moves by `shift` lattice units, with noise standard
deviation `z * shift` (z the noise multiplier):

    discrete:   delta(eps) = sum_y max(0, P(y) - e^eps Q(y)),  P = N_Z(0, s^2), Q = N_Z(shift, s^2)
    continuous: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),  mu = 1/z
                (Balle & Wang 2018, Theorem 8)

and prints the ratio discrete / continuous. Above 1 the continuous pair does not bound the
discrete mechanism at that point. A measurement, not a proof (docs/privacy.md says what it
shows).

    /usr/bin/python3 tools/discrete_gaussian_hockey_stick.py
"""
import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm

EPSILONS = [0.01, 0.1, 0.5, 1.0, 2.0, 4.0]


def discrete_delta(shift: int, s: float, eps: float) -> float:
    r = int(40 * s) + shift + 10  # the mass beyond 40 standard deviations is below 1e-300
    y = np.arange(-r, r + 1)
    log_p = -(y.astype(float) ** 2) / (2 * s * s)
    log_p -= logsumexp(log_p)
    log_q = -((y - shift).astype(float) ** 2) / (2 * s * s)
    log_q -= logsumexp(log_q)
    return float(np.sum(np.maximum(0.0, np.exp(log_p) - np.exp(eps + log_q))))


def continuous_delta(z: float, eps: float) -> float:
    mu = 1.0 / z
    return float(norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2))


def main() -> None:
    print("shift z    " + " ".join(f"eps={e:<8}" for e in EPSILONS) + " (discrete delta / continuous delta)")
    for shift in [1, 10, 100, 1000]:
        for z in [0.5, 1.0, 4.0, 35.0]:
            cells = []
            for eps in EPSILONS:
                c = continuous_delta(z, eps)
                cells.append(f"{discrete_delta(shift, z * shift, eps) / c:<12.6f}" if c > 1e-250 else f"{'-':<12}")
            print(f"{shift:<5} {z:<4} " + " ".join(cells))


if __name__ == "__main__":
    main()
