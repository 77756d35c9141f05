// Random numbers that do not depend on how work is split across ranks or threads.
//
// Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011) is a counter-based generator: the value at position i of stream (seed, a, b)
// is a pure function of those numbers. Batch selection (same on every rank with no
// communication), per-partition samplers and dropout keys use it, so 1, 2 or 4 ranks see
// the same random choices. Xoshiro256** (Blackman & Vigna 2018) is the fast sequential
// generator for inner loops (random walks), seeded from a Philox stream.
#pragma once

#include <array>
#include <cstdint>

namespace dpgnn {

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// One Philox4x32-10 block: 4 x 32 random bits for (counter, key).
inline std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> ctr,
                                                  std::array<std::uint32_t, 2> key) {
  constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // multipliers (paper, Table 2)
  constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(kM0) * ctr[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(kM1) * ctr[2];
    ctr = {static_cast<std::uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<std::uint32_t>(p1),
           static_cast<std::uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<std::uint32_t>(p0)};
    key[0] += kW0;
    key[1] += kW1;
  }
  return ctr;
}

// A stream of random numbers identified by (seed, stream_a, stream_b).
class CounterRng {
 public:
  CounterRng(std::uint64_t seed, std::uint64_t stream_a, std::uint64_t stream_b = 0) {
    const std::uint64_t k = splitmix64(seed ^ splitmix64(stream_a + 0x632BE59BD9B4E019ULL));
    key_ = {static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32)};
    hi_ = stream_b;
  }
  std::uint64_t next_u64() {
    if (avail_ == 0) refill();
    const std::uint64_t v = (static_cast<std::uint64_t>(buf_[4 - avail_]) << 32) | buf_[5 - avail_];
    avail_ -= 2;
    return v;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), unbiased (Lemire's multiply-shift with rejection).
  std::uint64_t below(std::uint64_t n) {
    if (n <= 1) return 0;
    for (;;) {
      const std::uint64_t x = next_u64();
      const __uint128_t m = static_cast<__uint128_t>(x) * n;
      const std::uint64_t low = static_cast<std::uint64_t>(m);
      if (low >= n || low >= (-n) % n) return static_cast<std::uint64_t>(m >> 64);
    }
  }
  // Jumps to position `block` of the stream (4 x 32 bits per block).
  void seek(std::uint64_t block) {
    pos_ = block;
    avail_ = 0;
  }

 private:
  void refill() {
    buf_ = philox4x32_10({static_cast<std::uint32_t>(pos_), static_cast<std::uint32_t>(pos_ >> 32),
                          static_cast<std::uint32_t>(hi_), static_cast<std::uint32_t>(hi_ >> 32)},
                         key_);
    ++pos_;
    avail_ = 4;
  }
  std::array<std::uint32_t, 2> key_{};
  std::uint64_t hi_ = 0, pos_ = 0;
  std::array<std::uint32_t, 4> buf_{};
  int avail_ = 0;
};

// Fast sequential generator for inner loops; seed it from a CounterRng stream.
class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed) {
    for (auto& w : s_) w = seed = splitmix64(seed);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n) by Lemire's multiply-shift; the bias is below n / 2^64 (negligible
  // for n < 2^32), which sampling neighbours can afford. Use CounterRng::below for privacy.
  std::uint64_t below_fast(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<__uint128_t>(next()) * n) >> 64);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<std::uint64_t, 4> s_{};
};

}  // namespace dpgnn
