// Batch selection: which subgraph ids a training step uses (DESIGN.md 3).
//
// Fixed-size uniform sampling without replacement of m ids out of the global M is the
// sampling the accountants for DRW (Wang, Balle & Kasiviswanathan 2019, the "sampling
// without replacement" subsampled RDP bound) and DP-GNN (Daigavane et al., Theorem 1)
// assume. Every rank must pick the same batch without communicating, so the batch is a
// pure function of (seed, step, M, m): a Philox stream keyed by (seed, step) drives
// Floyd's algorithm (Bentley & Floyd, "A sample of brilliance", CACM 1987), which draws a
// uniform m-subset in O(m) time and memory however large M is. Poisson sampling (each id
// independently with probability q; Abadi et al. 2016, Mironov et al. 2019) is the option
// for the Poisson accountant, drawn in O(M q) expected time by geometric skips.
#pragma once

#include <cstdint>
#include <vector>

namespace dpgnn::sampling {

// m distinct ids of [0, M), uniform over all m-subsets, sorted ascending. Throws
// UsageError unless 1 <= m <= M.
std::vector<std::int64_t> sample_batch_without_replacement(std::uint64_t seed, std::uint64_t step,
                                                           std::int64_t total, std::int64_t m);

// Each id of [0, M) independently with probability q, sorted ascending (may be empty).
// Throws UsageError unless 0 < q <= 1 and M >= 1.
std::vector<std::int64_t> sample_batch_poisson(std::uint64_t seed, std::uint64_t step,
                                               std::int64_t total, double q);

}  // namespace dpgnn::sampling
