// Counter-based RNG: known-answer vectors of Philox4x32-10 (Random123's kat_vectors) and
// the properties batch selection relies on (a pure function of seed and stream).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dpgnn/util/checksum.h"
#include "dpgnn/util/rng.h"

namespace dpgnn {
namespace {

TEST(Philox4x32, MatchesTheRandom123KnownAnswerVectors) {
  using A4 = std::array<std::uint32_t, 4>;
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (A4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (A4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (A4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(CounterRng, IsAPureFunctionOfSeedAndStream) {
  CounterRng a(42, 7, 3), b(42, 7, 3), c(42, 8, 3), d(43, 7, 3);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    EXPECT_NE(x, c.next_u64());
    EXPECT_NE(x, d.next_u64());
  }
}

TEST(CounterRng, BelowIsUniform) {
  // Chi-square over 10 cells, 100k draws: the 99.99% quantile of chi2(9) is 33.7.
  CounterRng r(1, 2);
  std::vector<int> counts(10, 0);
  const int n = 100000;
  for (int i = 0; i < n; ++i) ++counts[r.below(10)];
  double chi2 = 0;
  for (int c : counts) chi2 += (c - n / 10.0) * (c - n / 10.0) / (n / 10.0);
  EXPECT_LT(chi2, 33.7);
}

TEST(CounterRng, UniformIsInTheUnitInterval) {
  CounterRng r(5, 5);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.005);
}

TEST(Checksum, DependsOnContentAndTagsAndIsStable) {
  Checksum a, b, c;
  a.update_tag("x");
  a.update(std::vector<int>{1, 2, 3});
  b.update_tag("x");
  b.update(std::vector<int>{1, 2, 3});
  c.update_tag("y");
  c.update(std::vector<int>{1, 2, 3});
  EXPECT_EQ(a.hex(), b.hex());
  EXPECT_NE(a.hex(), c.hex());
  EXPECT_EQ(a.hex().size(), 32u);
}

}  // namespace
}  // namespace dpgnn
