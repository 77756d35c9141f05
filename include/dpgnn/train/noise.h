// The Gaussian noise of DP-SGD, added once per step at rank 0 (DESIGN.md decision 7).
//
// Only rank 0 adds N(0, sigma^2) to its local clipped sum before the all-reduce, so the
// reduced gradient carries exactly one draw whatever the number of ranks. The noise of
// step t is a pure function of (noise seed, t): Box-Muller on a Philox stream keyed by
// them. The seed comes from the OS's secure randomness (std::random_device reads
// /dev/urandom or getrandom) unless the config pins one. Keying by step lets a resumed
// run replay the steps after its last checkpoint with exactly the noise they had — the
// same release again, not a new one — so a resume never spends budget twice.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dpgnn::train {

// 64 bits from the operating system's secure random source.
std::uint64_t secure_random_seed();

// out[i] += sigma * z_i, z_i ~ N(0, 1) i.i.d., the stream keyed by (seed, step).
void add_gaussian_noise(float* out, std::size_t n, double sigma, std::uint64_t seed, std::uint64_t step);

}  // namespace dpgnn::train
