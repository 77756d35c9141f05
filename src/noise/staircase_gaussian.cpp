// The exact discrete Gaussian by rejection from a staircase envelope (staircase_gaussian.h).
//
// Target: P[X = x] proportional to f(x) = exp(-x^2 / (2 s2)), x in Z.
// Rejection sampling (von Neumann 1951; Devroye 1986, "Non-Uniform Random Variate
// Generation", II.3.1): draw x from a proposal q, accept with probability f(x) / (M q(x))
// where M q >= f; the accepted values are exactly distributed as f / sum f. Here:
//
//   * Blocks. With w = 2^block_bits and N = blocks_per_side, the integers [0, N w) are cut
//     into N blocks [i w, (i + 1) w) and [-N w, -1] into N blocks [-(i + 1) w, -i w - 1];
//     a block's reference a is its |x| nearest 0 (i w, resp. i w + 1). Its weight is the
//     integer W = ceil(lambda exp(-a^2 / (2 s2))) (>= the value; certified, MPFR with
//     directed rounding), lambda an integer scale. A block is chosen with probability
//     W / S, then x uniformly inside it: q(x) = W / (S w).
//   * Tails. x = B + g (right) or -(B + 1 + g) (left), B = N w, reference a_T = B resp.
//     B + 1, g ~ Geometric: P[g] = (1 - rho) rho^g, rho = exp(-a_T / s2) (CKS20 Algorithm 2's
//     construction, below). Weight T = ceil(lambda exp(-a_T^2 / (2 s2)) / (w (1 - rho))), so
//     q(x) = T w (1 - rho) rho^g / (S w).
//   * A dummy entry takes the rest of S (S a power of two for the alias draw); choosing it
//     rejects. The choice among entries is Walker's alias method in integers (Vose 1991):
//     exact for integer weights.
//
// With M = S w / lambda, the acceptance f(x) / (M q(x)) is
//     block:  lambda exp(-x^2 / (2 s2)) / W                                 (<= 1: |x| >= a)
//     tail:   lambda exp(-(a_T^2 + g^2) / (2 s2)) / (T w (1 - exp(-a_T / s2)))
// (the tail's since (a_T + g)^2 - 2 g a_T = a_T^2 + g^2; <= 1 by T's choice). Both are
// decided by one uniform U in [0, 1): accept iff U < acceptance. U is read as a 32-bit digit
// and, only when needed, more digits. The fast path estimates a block's acceptance in
// double precision (the block's constant times exp(-r), r = (x^2 - a^2) / (2 s2), r <= 1/8
// for the default shape, by a Taylor polynomial) with a relative error below 2^-39 and
// decides when U's cell lies outside the estimate +- 2^-34 (relative). Otherwise (about 2^-31
// of the proposals, every tail proposal, every proposal with r > 1/4) the certified path
// computes lower and upper bounds of the acceptance in MPFR with directed rounding (each
// operation rounded the safe way, so the true value lies between them), at a precision
// above U's digits, and reads further digits of U until the comparison is decided; it
// terminates with probability 1 (the acceptance is irrational unless x = 0, where it is
// rational and decided once U's digits pass its dyadic expansion or its value).
// Every decision is the one the exact comparison gives: the fast path decides only where the
// exact comparison agrees, and then reads no further digits, so the values and the stream
// positions do not depend on which path decided (exact_only checks it).
//
// Cost per sample: about 1.02 proposals (the blocks' slope rejects about E|x| w / s2 ~ 1%,
// the dummy 2^-16), each 1.5 keystream words, a table lookup and a degree-9 polynomial.
#include "dpgnn/noise/staircase_gaussian.h"

#include <gmp.h>
#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "dpgnn/noise/discrete_gaussian.h"
#include "dpgnn/util/error.h"

namespace dpgnn::noise::staircase {

namespace {

using u128 = SecureStream::u128;

constexpr int kCapacityBits = 32;     // each alias column holds 2^32 units
constexpr int kDigitBits = 32;        // the acceptance uniform's first digit
constexpr double kMaxFastR = 0.25;    // the polynomial's range
constexpr double kMargin = 0x1.0p-34;  // the fast path's allowance, relative

std::atomic<std::uint64_t> certified_count{0}, tail_count{0};

// An MPFR number freed on scope exit.
struct Mp {
  mpfr_t v;
  explicit Mp(mpfr_prec_t precision) { mpfr_init2(v, precision); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
};

struct Mpz {
  mpz_t v;
  Mpz() { mpz_init(v); }
  explicit Mpz(u128 x) {
    mpz_init(v);
    const std::uint64_t limbs[2] = {static_cast<std::uint64_t>(x), static_cast<std::uint64_t>(x >> 64)};
    mpz_import(v, 2, -1, sizeof(std::uint64_t), 0, 0, limbs);
  }
  ~Mpz() { mpz_clear(v); }
  Mpz(const Mpz&) = delete;
  Mpz& operator=(const Mpz&) = delete;
};

// lambda exp(-q_num / (2 s2)) / den, where den = `weight` for a block, and for a tail
// weight w (1 - exp(-tail_ref / s2)), bounded below (lo) and above (hi) at `precision` bits:
// every operation rounds toward the side that keeps the bound safe.
struct Acceptance {
  u128 q_num = 0;
  std::uint64_t weight = 0;
  std::uint64_t tail_ref = 0;  // 0 for a block
};

void bound(const Acceptance& acc, std::uint64_t variance, std::uint64_t lambda, int block_bits,
           mpfr_prec_t precision, bool upper, mpfr_t out) {
  const mpfr_rnd_t up = upper ? MPFR_RNDU : MPFR_RNDD, down = upper ? MPFR_RNDD : MPFR_RNDU;
  Mp q(precision), den(precision);
  const Mpz q_num(acc.q_num);
  // exp(-q) rounded `up`: q rounded `down`.
  mpfr_set_z(q.v, q_num.v, down);
  mpfr_div_ui(q.v, q.v, 2 * static_cast<unsigned long>(variance), down);
  mpfr_neg(q.v, q.v, MPFR_RNDN);  // exact
  mpfr_exp(out, q.v, up);
  mpfr_mul_ui(out, out, lambda, up);
  if (acc.tail_ref == 0) {
    mpfr_set_ui(den.v, acc.weight, down);
  } else {
    // 1 - exp(-y), y = tail_ref / s2, rounded `down` (so the quotient rounds `up`): exp(-y)
    // rounded `up`, from y rounded `down`.
    Mp y(precision);
    mpfr_set_ui(y.v, acc.tail_ref, down);
    mpfr_div_ui(y.v, y.v, variance, down);
    mpfr_neg(y.v, y.v, MPFR_RNDN);
    mpfr_exp(y.v, y.v, up);
    mpfr_ui_sub(den.v, 1, y.v, down);
    mpfr_mul_ui(den.v, den.v, acc.weight, down);
    mpfr_mul_2ui(den.v, den.v, static_cast<unsigned long>(block_bits), down);  // x w, exact
  }
  mpfr_div(out, out, den.v, up);
}

}  // namespace

class Table {
 public:
  std::uint64_t variance = 0;
  Shape shape;
  std::uint64_t blocks = 0;        // 2 N: entries [0, N) negative blocks, [N, 2 N) positive
  std::uint64_t lambda = 0;
  int column_bits = 0;
  bool offset_in_word = true;      // the block offset shares the alias draw's 64-bit word
  std::uint64_t tail_weight[2] = {0, 0};  // left, right
  std::uint64_t tail_ref[2] = {0, 0};
  double inv_two_s2 = 0;
  std::vector<std::uint64_t> column;  // alias column: threshold (low 32 bits) | alias (high 32)
  std::vector<std::uint64_t> weight;  // per entry (blocks, then left tail, right tail, dummy)
  std::vector<std::uint64_t> ref;     // a: the block's |x| nearest 0
  std::vector<double> scale;          // lambda exp(-a^2 / (2 s2)) / W, to the nearest double
};

namespace {

std::uint64_t entry_of(const Table& t, std::uint64_t word) {
  const std::uint64_t col = word >> (64 - t.column_bits);
  const auto threshold = static_cast<std::uint32_t>(t.column[col]);
  const auto v = static_cast<std::uint32_t>(word >> (64 - t.column_bits - kCapacityBits));
  return v < threshold ? col : t.column[col] >> 32;
}

// exp(-r) for 0 <= r <= 1/4 by its Taylor polynomial of degree 9: truncation below
// (1/4)^10 / 10! < 2^-41 (relative: 2^-40.6, exp(-r) >= 0.78), Horner's rounding below
// 20 2^-53 e^(1/4) < 2^-48. (-1)^k / k! rounded to doubles: 2^-53 relative each.
inline double exp_minus_small(double r) {
  double p = -1.0 / 362880;
  p = p * r + 1.0 / 40320;
  p = p * r - 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r - 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r - 1.0 / 6;
  p = p * r + 1.0 / 2;
  p = p * r - 1.0;
  return p * r + 1.0;
}

// U < acceptance? U's first 32 bits are `digit`; further digits are read while the
// certified bounds do not decide (see the top of the file).
__attribute__((noinline)) bool certified_below(SecureStream& rng, std::uint32_t digit, const Table& t,
                                               const Acceptance& acc) {
  certified_count.fetch_add(1, std::memory_order_relaxed);
  Mpz m, m_next;
  mpz_set_ui(m.v, digit);
  for (unsigned long digits_bits = kDigitBits;; digits_bits += kDigitBits) {
    const auto precision = static_cast<mpfr_prec_t>(digits_bits + 96);
    Mp lo(precision), hi(precision);
    bound(acc, t.variance, t.lambda, t.shape.block_bits, precision, false, lo.v);
    bound(acc, t.variance, t.lambda, t.shape.block_bits, precision, true, hi.v);
    // U in [m, m + 1) / 2^L: accept when m + 1 <= lo 2^L, reject when m >= hi 2^L.
    mpfr_mul_2ui(lo.v, lo.v, digits_bits, MPFR_RNDN);  // exact
    mpfr_mul_2ui(hi.v, hi.v, digits_bits, MPFR_RNDN);
    mpz_add_ui(m_next.v, m.v, 1);
    if (mpfr_cmp_z(lo.v, m_next.v) >= 0) return true;
    if (mpfr_cmp_z(hi.v, m.v) <= 0) return false;
    // Undecided after L bits has probability about 2^-L: 4096 bits means a defect.
    if (digits_bits >= 4096) throw Error("staircase sampler: an acceptance stayed undecided after 4096 bits", kExitInternal);
    mpz_mul_2exp(m.v, m.v, kDigitBits);
    mpz_add_ui(m.v, m.v, static_cast<unsigned long>(rng.bits(kDigitBits)));
  }
}

// g with P[g] proportional to exp(-g a / s2): CKS20 Algorithm 2 with (s, t) = (a, s2): X =
// U + s2 V, U in [0, s2) with P proportional to exp(-U / s2) (uniform, accepted with
// Bernoulli(exp(-U / s2))), V ~ Geometric(1 - exp(-1)) (a run of Bernoulli(exp(-1))), so
// P[X = x] is proportional to exp(-x / s2); then g = floor(X / a).
std::uint64_t tail_geometric(SecureStream& rng, std::uint64_t variance, std::uint64_t a) {
  for (;;) {
    const std::uint64_t u = rng.below(variance);
    if (!detail::bernoulli_exp_minus(rng, u, variance, false)) continue;
    u128 v = 0;
    while (detail::bernoulli_exp_minus_one(rng, false)) ++v;
    const u128 g = (u + static_cast<u128>(variance) * v) / a;
    // g >= 2^62 needs v > 2^62 a / s2 > 2^30 failures in a row: probability below exp(-2^30).
    // Reported as 2^62, which the caller rejects (its acceptance is below exp(-2^123 / s2)).
    return g >= (static_cast<u128>(1) << 62) ? std::uint64_t{1} << 62 : static_cast<std::uint64_t>(g);
  }
}

// Walker's alias table for integer weights summing to columns 2^kCapacityBits (Vose 1991,
// "A linear algorithm for generating random numbers with a given distribution", in integers:
// P[entry i] = (its threshold + the capacity others hand it) / total = weight_i / total).
std::vector<std::uint64_t> alias_columns(std::vector<std::uint64_t> w) {
  const std::uint64_t cap = std::uint64_t{1} << kCapacityBits;
  // A full column: threshold 2^32 - 1 and alias itself (v = 2^32 - 1 picks itself too).
  std::vector<std::uint64_t> col(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) col[i] = (cap - 1) | (static_cast<std::uint64_t>(i) << 32);
  std::vector<std::size_t> small, large;
  for (std::size_t i = 0; i < w.size(); ++i) (w[i] < cap ? small : large).push_back(i);
  while (!small.empty() && !large.empty()) {
    const std::size_t s = small.back(), l = large.back();
    small.pop_back();
    col[s] = w[s] | (static_cast<std::uint64_t>(l) << 32);
    w[l] -= cap - w[s];  // l hands s's column the capacity s lacks
    if (w[l] < cap) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // What is left holds exactly cap (integer arithmetic, total = columns cap): full columns.
  for (std::size_t i : small)
    if (w[i] != cap) throw Error("staircase sampler: alias table does not balance", kExitInternal);
  for (std::size_t i : large)
    if (w[i] != cap) throw Error("staircase sampler: alias table does not balance", kExitInternal);
  return col;
}

std::uint64_t ceil_bound(const Acceptance& acc, std::uint64_t variance, std::uint64_t lambda, int block_bits) {
  Mp hi(128);
  bound(acc, variance, lambda, block_bits, 128, true, hi.v);
  mpfr_ceil(hi.v, hi.v);
  if (mpfr_cmp_ui(hi.v, 1) < 0) return 1;
  if (!mpfr_fits_ulong_p(hi.v, MPFR_RNDU)) throw Error("staircase sampler: weight overflow", kExitInternal);
  return static_cast<std::uint64_t>(mpfr_get_ui(hi.v, MPFR_RNDU));
}

}  // namespace

Shape default_shape(std::uint64_t variance) {
  const double sigma = std::sqrt(static_cast<double>(variance));
  Shape s;
  // sigma / 128 < w <= sigma / 64, at most 2^20 (so the offset fits the alias word).
  s.block_bits = std::max(0, std::min(20, static_cast<int>(std::floor(std::log2(sigma))) - 6));
  const double w = std::ldexp(1.0, s.block_bits);
  s.blocks_per_side = static_cast<std::uint64_t>(std::ceil(8 * sigma / w));
  return s;
}

std::shared_ptr<const Table> make_table(std::uint64_t variance, Shape shape) {
  if (variance < 1 || variance > (std::uint64_t{1} << 58))
    throw UsageError("staircase sampler: variance " + std::to_string(variance) + " outside [1, 2^58]");
  if (shape.block_bits < 0 || shape.block_bits > 40 || shape.blocks_per_side < 1 || shape.blocks_per_side > (1u << 20))
    throw UsageError("staircase sampler: block bits must be in [0, 40] and blocks per side in [1, 2^20]");
  const std::uint64_t w = std::uint64_t{1} << shape.block_bits;
  const u128 edge = static_cast<u128>(shape.blocks_per_side) * w;  // B
  // The fast path forms d = delta (2 a + delta) < w (2 B + w) in 64 bits.
  if (static_cast<u128>(w) * (2 * edge + w) >= (static_cast<u128>(1) << 63))
    throw UsageError("staircase sampler: blocks too wide for the 64-bit fast path");
  auto t = std::make_shared<Table>();
  t->variance = variance;
  t->shape = shape;
  const std::uint64_t n = shape.blocks_per_side;
  t->blocks = 2 * n;
  const std::uint64_t entries = t->blocks + 3;  // + left tail, right tail, dummy
  t->column_bits = 1;
  while ((std::uint64_t{1} << t->column_bits) < entries) ++t->column_bits;
  t->offset_in_word = t->column_bits + kCapacityBits + shape.block_bits <= 64;
  const std::uint64_t columns = std::uint64_t{1} << t->column_bits;
  const std::uint64_t total = columns << kCapacityBits;
  t->ref.assign(columns, 0);
  t->scale.assign(columns, 0.0);
  for (std::uint64_t e = 0; e < t->blocks; ++e)
    t->ref[e] = e < n ? (n - 1 - e) * w + 1 : (e - n) * w;
  t->tail_ref[0] = static_cast<std::uint64_t>(edge) + 1;
  t->tail_ref[1] = static_cast<std::uint64_t>(edge);
  t->inv_two_s2 = 1.0 / (2.0 * static_cast<double>(variance));

  // lambda: the weights (about lambda times their exp) fill 1 - 2^-16 of the total, leaving
  // the dummy little. An estimate in double, raised 2^-30: the certified weights are checked.
  double mass = 0;
  for (std::uint64_t e = 0; e < t->blocks; ++e) {
    const double a = static_cast<double>(t->ref[e]);
    mass += std::exp(-a * a * t->inv_two_s2);
  }
  for (std::uint64_t a : t->tail_ref) {  // exp(-a^2 / (2 s2)) / (w (1 - exp(-a / s2)))
    const double ad = static_cast<double>(a);
    mass += std::exp(-ad * ad * t->inv_two_s2) / (static_cast<double>(w) * -std::expm1(-ad / static_cast<double>(variance)));
  }
  mass *= 1 + 0x1.0p-30;
  const double room = static_cast<double>(total) * (1 - 0x1.0p-16) - static_cast<double>(entries);
  t->lambda = static_cast<std::uint64_t>(std::max(1.0, std::floor(room / mass)));

  t->weight.assign(columns, 0);
  u128 sum = 0;
  for (std::uint64_t e = 0; e < t->blocks; ++e) {
    Acceptance acc;
    acc.q_num = static_cast<u128>(t->ref[e]) * t->ref[e];
    acc.weight = 1;
    t->weight[e] = ceil_bound(acc, variance, t->lambda, shape.block_bits);
    sum += t->weight[e];
    // The block's constant lambda exp(-a^2 / (2 s2)) / W, to within 2^-53 (fast path only).
    Mp c(128);
    acc.weight = t->weight[e];
    bound(acc, variance, t->lambda, shape.block_bits, 128, false, c.v);
    t->scale[e] = mpfr_get_d(c.v, MPFR_RNDN);
  }
  for (int side = 0; side < 2; ++side) {
    Acceptance acc;
    acc.q_num = static_cast<u128>(t->tail_ref[side]) * t->tail_ref[side];
    acc.weight = 1;
    acc.tail_ref = t->tail_ref[side];
    t->tail_weight[side] = ceil_bound(acc, variance, t->lambda, shape.block_bits);
    t->weight[t->blocks + side] = t->tail_weight[side];
    sum += t->tail_weight[side];
  }
  if (sum > total) throw Error("staircase sampler: weights exceed the alias table", kExitInternal);
  t->weight[t->blocks + 2] = static_cast<std::uint64_t>(total - sum);  // the dummy
  t->column = alias_columns(t->weight);
  return t;
}

std::shared_ptr<const Table> table_for(std::uint64_t variance) {
  static std::mutex mutex;
  static std::vector<std::shared_ptr<const Table>> cache;  // the latest few variances
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& t : cache)
    if (t->variance == variance) return t;
  auto t = make_table(variance, default_shape(variance));
  if (cache.size() >= 4) cache.erase(cache.begin());
  cache.push_back(t);
  return t;
}

void sample(const Table& t, SecureStream& rng, std::int64_t* out, std::size_t count, bool exact_only) {
  constexpr std::size_t kBatch = 256;
  std::uint64_t entry[kBatch], offset[kBatch];
  std::uint32_t digit[kBatch];
  double estimate[kBatch];
  const std::uint64_t offset_mask = (std::uint64_t{1} << t.shape.block_bits) - 1;
  const std::uint64_t n = t.shape.blocks_per_side;
  while (count > 0) {
    const std::size_t m = std::min(kBatch, count + count / 16 + 2);
    // Stage 1: the proposals (entry and offset), one 64-bit word each when they fit.
    for (std::size_t k = 0; k < m; ++k) {
      const std::uint64_t word = rng.next_u64();
      entry[k] = entry_of(t, word);
      offset[k] = word & offset_mask;
    }
    if (!t.offset_in_word)
      for (std::size_t k = 0; k < m; ++k) offset[k] = rng.bits(t.shape.block_bits);
    // Stage 2: the acceptance uniforms' first digits.
    for (std::size_t k = 0; k < m; ++k) digit[k] = static_cast<std::uint32_t>(rng.bits(kDigitBits));
    // Stage 3: the estimates (tails and the dummy have scale 0; NaN sends a proposal to the
    // certified path: comparisons with NaN are false).
    for (std::size_t k = 0; k < m; ++k) {
      const std::uint64_t a = t.ref[entry[k]], delta = offset[k];
      const double r = static_cast<double>(static_cast<std::int64_t>(delta * (2 * a + delta))) * t.inv_two_s2;
      estimate[k] = r <= kMaxFastR && !exact_only ? t.scale[entry[k]] * exp_minus_small(r) : NAN;
    }
    // Stage 4: decisions, in order; accepted values are written and kept.
    std::size_t kept = 0;
    for (std::size_t k = 0; k < m && kept < count; ++k) {
      const std::uint64_t e = entry[k];
      std::uint64_t magnitude;
      bool negative;
      Acceptance acc;
      if (__builtin_expect(e < t.blocks, 1)) {
        magnitude = t.ref[e] + offset[k];
        negative = e < n;
        const double lo = static_cast<double>(digit[k]) * 0x1.0p-32, hi = lo + 0x1.0p-32;
        const double est = estimate[k];
        bool accept;
        if (hi <= est * (1 - kMargin)) {
          accept = true;
        } else if (lo >= est * (1 + kMargin)) {
          accept = false;
        } else {
          acc.q_num = static_cast<u128>(magnitude) * magnitude;
          acc.weight = t.weight[e];
          accept = certified_below(rng, digit[k], t, acc);
        }
        out[kept] = negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
        kept += accept;
        continue;
      }
      if (e >= t.blocks + 2) continue;  // the dummy: reject
      tail_count.fetch_add(1, std::memory_order_relaxed);
      const int side = static_cast<int>(e - t.blocks);  // 0 left, 1 right
      const std::uint64_t g = tail_geometric(rng, t.variance, t.tail_ref[side]);
      if (g >= std::uint64_t{1} << 62) continue;  // see tail_geometric
      acc.q_num = static_cast<u128>(t.tail_ref[side]) * t.tail_ref[side] + static_cast<u128>(g) * g;
      acc.weight = t.tail_weight[side];
      acc.tail_ref = t.tail_ref[side];
      const bool accept = certified_below(rng, digit[k], t, acc);
      magnitude = t.tail_ref[side] + g;  // < 2^62 + 2^61
      out[kept] = side == 0 ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
      kept += accept;
    }
    out += kept;
    count -= kept;
  }
}

Counters counters() {
  return {certified_count.load(std::memory_order_relaxed), tail_count.load(std::memory_order_relaxed)};
}

}  // namespace dpgnn::noise::staircase
