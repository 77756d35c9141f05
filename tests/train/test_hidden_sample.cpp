// train/hidden_sample: the hidden uniform sample of training nodes (DPAR's graph sampling)
// against a slow direct implementation (hash every candidate, sort, take the m smallest), the
// same on 1, 2, 3 and 4 ranks (LocalGroup threads) for any split of the candidate range, and
// uniform: over many keys each candidate is in the sample m / U of the time.
#include "hidden_sample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "dpgnn/dist/communicator.h"
#include "dpgnn/dist/local_group.h"
#include "dpgnn/util/error.h"

namespace dpgnn::train {
namespace {

Secret key_of(std::uint8_t b) {
  Secret s;
  s.bytes.fill(b);
  s.bytes[31] = 7;
  return s;
}

// The direct definition: the m candidates of [0, U) with the smallest keyed hashes.
std::set<std::int64_t> direct_sample(const Secret& key, std::int64_t U, std::int64_t m) {
  std::vector<std::pair<unsigned __int128, std::int64_t>> h;
  for (std::int64_t c = 0; c < U; ++c) h.push_back({keyed_hash128(key, static_cast<std::uint64_t>(c)), c});
  std::sort(h.begin(), h.end());
  std::set<std::int64_t> out;
  for (std::int64_t i = 0; i < m; ++i) out.insert(h[static_cast<std::size_t>(i)].second);
  return out;
}

// Members of the sample (and of its first `first` nodes, each reported by its owner) computed
// on `ranks` ranks, rank r owning [cuts[r], cuts[r + 1]); every rank answers membership for
// every candidate, and all ranks must agree.
std::pair<std::set<std::int64_t>, std::set<std::int64_t>> on_ranks(const Secret& key, std::int64_t U, std::int64_t m,
                                                                   std::int64_t first, const std::vector<std::int64_t>& cuts) {
  const int ranks = static_cast<int>(cuts.size()) - 1;
  dist::LocalGroup group(ranks);
  std::vector<std::set<std::int64_t>> members(static_cast<std::size_t>(ranks)), firsts(members.size());
  group.run([&](dist::Communicator& comm) {
    const auto r = static_cast<std::size_t>(comm.rank());
    const HiddenSample s = HiddenSample::select(key, U, m, first, cuts[r], cuts[r + 1], comm);
    EXPECT_EQ(s.size(), m);
    EXPECT_EQ(s.universe(), U);
    for (std::int64_t c = 0; c < U; ++c)
      if (s.contains(c)) members[r].insert(c);
    for (auto c : s.owned_leading()) {
      EXPECT_GE(c, cuts[r]);
      EXPECT_LT(c, cuts[r + 1]);
      firsts[r].insert(c);
    }
  });
  std::set<std::int64_t> all_firsts;
  for (std::size_t r = 0; r < members.size(); ++r) {
    EXPECT_EQ(members[r], members[0]) << "rank " << r;
    all_firsts.insert(firsts[r].begin(), firsts[r].end());
  }
  return {members[0], all_firsts};
}

TEST(HiddenSample, IsTheMSmallestHashesOnAnyNumberOfRanks) {
  const std::int64_t U = 1000, m = 90;
  const Secret key = key_of(3);
  const auto expected = direct_sample(key, U, m);
  const auto expected_first = direct_sample(key, U, 7);
  for (const auto& cuts : std::vector<std::vector<std::int64_t>>{
           {0, U}, {0, 500, U}, {0, 1, 999, U}, {0, 0, 300, 301, U}}) {
    const auto [members, firsts] = on_ranks(key, U, m, 7, cuts);
    EXPECT_EQ(members, expected) << cuts.size() - 1 << " ranks";
    EXPECT_EQ(firsts, expected_first) << cuts.size() - 1 << " ranks";
  }
  // m = U: everything; m = 1: one node.
  EXPECT_EQ(on_ranks(key, 50, 50, 1, {0, 20, 50}).first.size(), 50u);
  EXPECT_EQ(on_ranks(key, 50, 1, 1, {0, 20, 50}).first, direct_sample(key, 50, 1));
}

TEST(HiddenSample, EveryCandidateIsSampledAtTheRateMOverU) {
  // 2000 keys, U = 40, m = 10: each candidate's count is Binomial(2000, 1/4) (mean 500, sd
  // 19.4); |count - 500| < 5 sd for all 40 candidates (false failure < 40 x 5.7e-7).
  const std::int64_t U = 40, m = 10;
  const int keys = 2000;
  std::vector<int> count(U, 0);
  dist::LocalGroup group(1);
  for (int k = 0; k < keys; ++k) {
    Secret key = key_of(static_cast<std::uint8_t>(k % 251));
    key.bytes[0] = static_cast<std::uint8_t>(k / 251);
    group.run([&](dist::Communicator& comm) {
      const HiddenSample s = HiddenSample::select(key, U, m, 0, 0, U, comm);
      int n = 0;
      for (std::int64_t c = 0; c < U; ++c)
        if (s.contains(c)) {
          ++count[static_cast<std::size_t>(c)];
          ++n;
        }
      EXPECT_EQ(n, m);
    });
  }
  const double mean = keys * 0.25, sd = std::sqrt(keys * 0.25 * 0.75);
  for (std::int64_t c = 0; c < U; ++c) EXPECT_LT(std::abs(count[static_cast<std::size_t>(c)] - mean), 5 * sd) << c;
}

TEST(HiddenSample, RefusesASampleLargerThanTheUniverse) {
  dist::LocalGroup group(1);
  EXPECT_THROW(group.run([&](dist::Communicator& comm) { HiddenSample::select(key_of(1), 10, 11, 0, 0, 10, comm); }),
               UsageError);
  EXPECT_THROW(group.run([&](dist::Communicator& comm) { HiddenSample::select(key_of(1), 10, 0, 0, 0, 10, comm); }),
               UsageError);
}

}  // namespace
}  // namespace dpgnn::train
