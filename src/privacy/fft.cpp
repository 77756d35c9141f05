// Radix-2 FFT (see fft.h). Twiddles are computed once per call for the largest pass (each
// from its own angle, no accumulated rotation error) and read with a stride by the smaller
// passes; butterflies use real arithmetic (std::complex's operator* checks for NaN/inf
// operands, which costs a library call per product here).
#include "fft.h"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace dpgnn::privacy::detail {

void fft(std::vector<std::complex<double>>& x, bool inverse) {
  const std::size_t n = x.size();
  if (n == 0 || (n & (n - 1)) != 0) throw std::invalid_argument("fft: size must be a power of two");
  for (std::size_t i = 1, j = 0; i < n; ++i) {
    std::size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(x[i], x[j]);
  }
  if (n == 1) return;
  const double sign = inverse ? 1.0 : -1.0;
  std::vector<double> wr(n / 2), wi(n / 2);
  for (std::size_t k = 0; k < n / 2; ++k) {
    const double angle = sign * 2.0 * M_PI * static_cast<double>(k) / static_cast<double>(n);
    wr[k] = std::cos(angle);
    wi[k] = std::sin(angle);
  }
  double* data = reinterpret_cast<double*>(x.data());  // [re, im] pairs (C++11 26.4/4)
  for (std::size_t len = 2; len <= n; len <<= 1) {
    const std::size_t half = len / 2, stride = n / len;
    for (std::size_t i = 0; i < n; i += len) {
      for (std::size_t k = 0; k < half; ++k) {
        double* u = data + 2 * (i + k);
        double* v = data + 2 * (i + k + half);
        const double cr = wr[k * stride], ci = wi[k * stride];
        const double tr = v[0] * cr - v[1] * ci, ti = v[0] * ci + v[1] * cr;
        v[0] = u[0] - tr;
        v[1] = u[1] - ti;
        u[0] += tr;
        u[1] += ti;
      }
    }
  }
}

}  // namespace dpgnn::privacy::detail
