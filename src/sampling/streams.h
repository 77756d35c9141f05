// Internal: the random streams of the samplers. Each sampler has its own tag so that two
// samplers (or the batch selector) with the same seed never read the same Philox stream;
// the part and the epoch complete the key, so a part's subgraphs are a pure function of
// (seed, part, epoch) whatever the number of ranks or threads.
#pragma once

#include <cstdint>

#include "dpgnn/sampling/sampler.h"
#include "dpgnn/util/rng.h"

namespace dpgnn::sampling::detail {

enum class StreamTag : std::uint64_t { drw = 1, dpgnn = 2, split = 3 };

inline CounterRng sampler_stream(StreamTag tag, const SamplerKey& key) {
  // stream_a mixes the tag into the part so that parts of different samplers never meet;
  // stream_b (the high counter words) is the epoch.
  const std::uint64_t a = splitmix64(static_cast<std::uint64_t>(tag) * 0x9E3779B97F4A7C15ULL) ^ key.part;
  return CounterRng(key.seed, a, key.epoch);
}

// The fast generator for a sampler's inner loop, seeded from its Philox stream.
inline Xoshiro256 sampler_rng(StreamTag tag, const SamplerKey& key) {
  CounterRng s = sampler_stream(tag, key);
  return Xoshiro256(s.next_u64());
}

}  // namespace dpgnn::sampling::detail
