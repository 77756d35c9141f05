// In-place iterative radix-2 FFT (internal to privacy/; standard library only).
// Cooley & Tukey 1965; the bit-reversal permutation followed by log2(n) butterfly passes,
// twiddles computed per pass from std::polar (exact enough for the PLD accountant, whose
// masses are >= 0 and compared at the 1e-12 level).
#pragma once

#include <complex>
#include <vector>

namespace dpgnn::privacy::detail {

// x.size() must be a power of two; inverse = true computes the unscaled inverse transform
// (the caller divides by n).
void fft(std::vector<std::complex<double>>& x, bool inverse);

}  // namespace dpgnn::privacy::detail
