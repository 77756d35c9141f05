// The exact discrete Gaussian N_Z(0, s2) for the large variances of the noise grid
// (s2 >= 2^32; the trainer's is near 2^52), by rejection from a staircase envelope: about
// 1.02 proposals per sample, each one table lookup, a uniform offset and one comparison,
// where CKS20 Algorithm 3 (noise.cpp) needs ~1.3 Gaussian and ~1.6 Laplace tries, each with
// several Bernoulli(exp(-x)) coins. Same law, other values: noise.h says which sampler a
// draw uses. The argument is in staircase_gaussian.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "dpgnn/util/secure_rng.h"

namespace dpgnn::noise::staircase {

// Below this variance the noise uses CKS20 Algorithm 3 (the table would be mostly edges).
constexpr std::uint64_t kMinVariance = std::uint64_t{1} << 32;

// Blocks of 2^block_bits integers, blocks_per_side of them on each side of 0; beyond them
// the two tails. The default puts sigma / 128 < block width <= sigma / 64 and the tails
// past 8 sigma; tests pick coarse shapes whose tails and exact path are hit often.
struct Shape {
  int block_bits = 0;
  std::uint64_t blocks_per_side = 0;
};
Shape default_shape(std::uint64_t variance);

class Table;  // the envelope and its alias table (staircase_gaussian.cpp)

// Builds the table for N_Z(0, variance) (variance in [1, 2^58]) with `shape`; throws
// UsageError for a shape the sampler cannot use (see the .cpp). Takes a few ms (certified
// bounds in MPFR for every block).
std::shared_ptr<const Table> make_table(std::uint64_t variance, Shape shape);
// The default shape's table, built once per variance and kept (thread-safe).
std::shared_ptr<const Table> table_for(std::uint64_t variance);

// `count` independent draws of N_Z(0, variance) into out[0..count), a pure function of the
// stream. With `exact_only` every acceptance is decided by the certified (MPFR) path: the
// values and the bits read are the same as without it (a test checks), only slower.
void sample(const Table& table, SecureStream& rng, std::int64_t* out, std::size_t count, bool exact_only = false);

// How often the floating-point estimate left an acceptance to the certified path, and how
// many proposals were tail proposals, since the process started (for tests and the bench).
struct Counters {
  std::uint64_t certified = 0, tail = 0;
};
Counters counters();

}  // namespace dpgnn::noise::staircase
