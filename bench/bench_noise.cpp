// The cost of the exact discrete Gaussian noise (train/noise.h) per training step: P
// coordinates drawn from the XChaCha20 keystream, at the trainer's grid (s2 ~ 2^52).
//   build/bench/bench_noise [--params 10000000] [--steps 3] [--threads 1,2]
// Results: docs/benchmarks.md.
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "dpgnn/train/noise.h"

int main(int argc, char** argv) {
  std::int64_t params = 10000000;
  int steps = 3;
  std::string threads = "1,2";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--params")) params = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: bench_noise [--params P] [--steps T] [--threads 1,2,...]\n");
      return 2;
    }
  }
  using namespace dpgnn;
  const train::NoiseGrid grid = train::make_noise_grid(2.0, 2.0, params);  // z = 1, C = 1, replace-one
  std::vector<double> buf(static_cast<std::size_t>(params), 0.0);
  const Secret key = random_secret();
  std::printf("params %lld, grid %.3g, s2 %llu (std %.6g for sigma 2)\n", static_cast<long long>(params), grid.gamma,
              static_cast<unsigned long long>(grid.variance), grid.sigma_effective);
  std::stringstream ts(threads);
  for (std::string t; std::getline(ts, t, ',');) {
    at::set_num_threads(std::atoi(t.c_str()));
    double best = 1e300;
    for (int s = 0; s < steps; ++s) {
      const auto a = std::chrono::steady_clock::now();
      train::add_discrete_gaussian_noise(buf.data(), buf.size(), grid.variance, key, static_cast<std::uint64_t>(s));
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }
    std::printf("threads %s: %.3f s per step (best of %d), %.1f ns per coordinate\n", t.c_str(), best, steps,
                1e9 * best / static_cast<double>(params));
  }
  return 0;
}
