// The cost of the exact discrete Gaussian noise (noise/discrete_gaussian.h) per training step: P
// coordinates drawn from the XChaCha20 keystream, at the trainer's grid (s2 ~ 2^52).
//   build/bench/bench_noise [--params 10000000] [--steps 3] [--threads 1,2,all] [--legacy 1]
//                           [--overlap-ms 0]
// For each thread count: samples per second (wall) and CPU-nanoseconds per sample (all
// threads' CPU time, less sensitive to other processes on a shared machine), for the current
// sampler and, with --legacy 1, the sampler as of 877de9b (copied below, on the same
// keystream code and the same chunk/thread split), interleaved step by step.
// --overlap-ms M: NoisePrefetcher, step t+1 drawn while the main thread works M ms on step t;
// reports how long add_to still waited per step (0 when the noise is off the critical path).
// Results: docs/benchmarks.md.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dpgnn/noise/discrete_gaussian.h"
#include "dpgnn/noise/prefetch.h"

namespace legacy {
// CKS20 Algorithms 1-3 as they were before issue 24 (src/train/noise.cpp at 877de9b): one
// uniform below d K per coin, 128-bit divisions. For the speed comparison only.
using dpgnn::SecureStream;
using u128 = SecureStream::u128;
bool bernoulli(SecureStream& rng, u128 n, u128 d) { return rng.below(d) < n; }
bool bernoulli_exp_minus_le1(SecureStream& rng, u128 n, u128 d) {
  std::uint64_t k = 1;
  while (k <= 64 && bernoulli(rng, n, d * k)) ++k;
  return (k % 2) == 1;
}
bool bernoulli_exp_minus(SecureStream& rng, u128 n, u128 d) {
  const u128 whole = n / d;
  for (u128 i = 0; i < whole; ++i)
    if (!bernoulli_exp_minus_le1(rng, 1, 1)) return false;
  return bernoulli_exp_minus_le1(rng, n % d, d);
}
std::int64_t sample_discrete_laplace(SecureStream& rng, std::uint64_t t) {
  for (;;) {
    const std::uint64_t u = rng.below(t);
    if (!bernoulli_exp_minus_le1(rng, u, t)) continue;
    std::uint64_t v = 0;
    while (bernoulli_exp_minus_le1(rng, 1, 1)) ++v;
    const std::uint64_t x = u + t * v;
    const bool negative = rng.bits(1) != 0;
    if (negative && x == 0) continue;
    return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}
std::uint64_t isqrt(std::uint64_t v) {
  auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(v)));
  while (r * r > v) --r;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r;
}
std::int64_t sample_discrete_gaussian(SecureStream& rng, std::uint64_t variance) {
  const std::uint64_t t = isqrt(variance) + 1;
  const u128 d = static_cast<u128>(2) * variance * (static_cast<u128>(t) * t);
  for (;;) {
    const std::int64_t y = sample_discrete_laplace(rng, t);
    const u128 ay = static_cast<u128>(y < 0 ? -static_cast<u128>(y) : static_cast<u128>(y));
    const u128 yt = ay * t;
    const u128 diff = yt >= variance ? yt - variance : variance - yt;
    if ((diff >> 63) != 0) continue;
    if (bernoulli_exp_minus(rng, diff * diff, d)) return y;
  }
}
// The same chunks and thread split as add_discrete_gaussian_noise_threads.
void add_noise(double* out, std::size_t n, std::uint64_t variance, const dpgnn::Secret& key, std::uint64_t step,
               int threads) {
  const std::size_t chunks = dpgnn::noise::noise_chunks(n);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t c; (c = next.fetch_add(1)) < chunks;) {
      SecureStream rng(key, dpgnn::StreamPurpose::noise, step, c);
      const std::size_t lo = c * dpgnn::noise::kNoiseChunk, hi = std::min(n, lo + dpgnn::noise::kNoiseChunk);
      for (std::size_t i = lo; i < hi; ++i) out[i] += static_cast<double>(sample_discrete_gaussian(rng, variance));
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}
}  // namespace legacy

namespace {
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
struct Best {
  double wall = 1e300, cpu = 1e300;
};
}  // namespace

int main(int argc, char** argv) {
  std::int64_t params = 10000000;
  int steps = 3;
  std::string threads = "1,2,all";
  bool with_legacy = false;
  double overlap_ms = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--params")) params = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = argv[i + 1];
    else if (!std::strcmp(argv[i], "--legacy")) with_legacy = std::atoi(argv[i + 1]) != 0;
    else if (!std::strcmp(argv[i], "--overlap-ms")) overlap_ms = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr,
                   "usage: bench_noise [--params P] [--steps T] [--threads 1,2,all] [--legacy 0|1] [--overlap-ms M]\n");
      return 2;
    }
  }
  using namespace dpgnn;
  const noise::NoiseGrid grid = noise::make_noise_grid(2.0, 2.0, params);  // z = 1, C = 1, replace-one
  const auto n = static_cast<std::size_t>(params);
  std::vector<double> buf(n, 0.0);
  const Secret key = random_secret();
  const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0) load[0] = -1;
  std::printf("params %lld, grid %.3g, s2 %llu (std %.6g for sigma 2), %d hardware threads, load average %.2f\n",
              static_cast<long long>(params), grid.gamma, static_cast<unsigned long long>(grid.variance),
              grid.sigma_effective, all, load[0]);
  std::stringstream ts(threads);
  for (std::string t; std::getline(ts, t, ',');) {
    const int k = t == "all" ? all : std::atoi(t.c_str());
    Best now, old;
    for (int s = 0; s < steps; ++s) {
      for (int which = 0; which < (with_legacy ? 2 : 1); ++which) {
        const auto a = std::chrono::steady_clock::now();
        const double c = cpu_seconds();
        if (which == 0)
          noise::add_discrete_gaussian_noise_threads(buf.data(), n, grid.variance, key, static_cast<std::uint64_t>(s),
                                                     k);
        else
          legacy::add_noise(buf.data(), n, grid.variance, key, static_cast<std::uint64_t>(s), k);
        Best& b = which == 0 ? now : old;
        b.wall = std::min(b.wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
        b.cpu = std::min(b.cpu, cpu_seconds() - c);
      }
    }
    const double np = static_cast<double>(params);
    std::printf("threads %d: new %.3f s per step, %.2fM samples/s, %.1f cpu-ns per sample", k, now.wall,
                np / now.wall / 1e6, 1e9 * now.cpu / np);
    if (with_legacy)
      std::printf(" | legacy %.3f s, %.2fM samples/s, %.1f cpu-ns per sample | speed-up %.2fx wall, %.2fx cpu",
                  old.wall, np / old.wall / 1e6, 1e9 * old.cpu / np, old.wall / now.wall, old.cpu / now.cpu);
    std::printf(" (best of %d)\n", steps);
  }
  if (overlap_ms > 0) {
    // The trainer's loop with the prefetcher: request t+1, work on t, add t's noise.
    noise::NoisePrefetcher pre(key, n, all);
    pre.request(0, grid.variance);
    double waited = 0, worst = 0;
    for (int s = 0; s < steps; ++s) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(overlap_ms);
      volatile double sink = 0;
      while (std::chrono::steady_clock::now() < until) sink = sink + 1;  // the step's compute (one core)
      const auto a = std::chrono::steady_clock::now();
      pre.add_to(buf.data(), static_cast<std::uint64_t>(s), grid.variance);
      pre.request(static_cast<std::uint64_t>(s) + 1, grid.variance);
      const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
      if (s > 0) waited += w, worst = std::max(worst, w);  // step 0 waits for the first draw
    }
    std::printf("prefetch (%d threads) with %.0f ms of work per step: add_to took %.1f ms per step on average, "
                "%.1f ms at worst (steps 1..%d; %llu hits, %llu misses)\n",
                all, overlap_ms, 1e3 * waited / std::max(1, steps - 1), 1e3 * worst, steps - 1,
                static_cast<unsigned long long>(pre.hits()), static_cast<unsigned long long>(pre.misses()));
  }
  return 0;
}
