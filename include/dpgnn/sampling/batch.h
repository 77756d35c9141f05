// Batch selection: which subgraph ids a training step uses (DESIGN.md 3).
//
// Fixed-size uniform sampling without replacement of m ids out of the global M is the
// sampling the accountants for DRW (Wang, Balle & Kasiviswanathan 2019, the "sampling
// without replacement" subsampled RDP bound) and DP-GNN (Daigavane et al., Theorem 1)
// assume, and they assume the batch is HIDDEN: it comes from the batch secret (a 256-bit key
// drawn at rank 0 from the OS and broadcast once; DESIGN.md 7), never from the public
// train.seed. Every rank must pick the same batch without communicating, so the batch is a
// pure function of (secret, step, M, m): the XChaCha20 keystream of (secret, step) drives
// Floyd's algorithm (Bentley & Floyd, "A sample of brilliance", CACM 1987), which draws a
// uniform m-subset in O(m) time and memory however large M is. Poisson sampling (each id
// independently with probability q; Abadi et al. 2016, Mironov et al. 2019) is the option
// for the Poisson accountant, drawn in O(M q) expected time by geometric skips.
#pragma once

#include <cstdint>
#include <vector>

#include "dpgnn/util/secure_rng.h"

namespace dpgnn::sampling {

// m distinct ids of [0, M), uniform over all m-subsets, sorted ascending. Throws
// UsageError unless 1 <= m <= M.
std::vector<std::int64_t> sample_batch_without_replacement(const Secret& key, std::uint64_t step,
                                                           std::int64_t total, std::int64_t m);

// Each id of [0, M) independently with probability q, sorted ascending (may be empty).
// Throws UsageError unless 0 < q <= 1 and M >= 1.
std::vector<std::int64_t> sample_batch_poisson(const Secret& key, std::uint64_t step,
                                               std::int64_t total, double q);

}  // namespace dpgnn::sampling
