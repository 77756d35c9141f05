#include "dpgnn/train/noise.h"

#include <cmath>
#include <random>

#include "dpgnn/util/rng.h"

namespace dpgnn::train {

namespace {
constexpr std::uint64_t kNoiseStream = 0x6e6f697365ULL;  // "noise"
}

std::uint64_t secure_random_seed() {
  std::random_device rd("/dev/urandom");
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

void add_gaussian_noise(float* out, std::size_t n, double sigma, std::uint64_t seed, std::uint64_t step) {
  CounterRng rng(seed, kNoiseStream, step);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  for (std::size_t i = 0; i < n; i += 2) {
    // Box-Muller (Box & Muller 1958): two independent N(0,1) from two uniforms; u1 in (0,1].
    const double u1 = 1.0 - rng.uniform();
    const double u2 = rng.uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    out[i] += static_cast<float>(sigma * r * std::cos(kTwoPi * u2));
    if (i + 1 < n) out[i + 1] += static_cast<float>(sigma * r * std::sin(kTwoPi * u2));
  }
}

}  // namespace dpgnn::train
