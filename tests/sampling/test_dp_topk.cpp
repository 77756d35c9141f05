// DP top-K release (sampling/dp_topk.h) against a slow direct implementation written here
// that materialises all U entries with explicit noise from std::mt19937_64 and the standard
// library's distributions (independent of the SecureStream samplers and of the order-statistic
// shortcut), and against closed forms (CDFs of maxima, the Gumbel-max softmax).
//
// Statistical tolerances: every check has a false-failure probability below 1e-6 (two-sided
// z = 5.0, p = 5.7e-7; chi-square critical values from the Wilson-Hilferty approximation at
// z = 5.0, which for df >= 3 over-states the 1 - 5.7e-7 quantile, i.e. errs on passing only
// by a negligible margin); keys and seeds are fixed, so the outcomes are deterministic.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dpgnn/sampling/dp_topk.h"
#include "dpgnn/util/secure_rng.h"

namespace dpgnn::sampling {
namespace {

constexpr double kZ = 5.0;

Secret key_of(std::uint8_t b) {
  Secret s;
  s.bytes.fill(b);
  return s;
}

SparseVector make_vec(std::vector<std::pair<std::int64_t, double>> entries) {
  SparseVector v;
  for (const auto& [i, x] : entries) {
    v.index.push_back(i);
    v.value.push_back(x);
  }
  return v;
}

// ---- the direct mechanism: all U entries, explicit noise ----------------------------------
TopK direct_topk(const SparseVector& v, std::int64_t universe, const TopKOptions& o, std::mt19937_64& gen) {
  std::vector<double> value(static_cast<std::size_t>(universe), 0.0);
  for (std::size_t i = 0; i < v.index.size(); ++i) value[static_cast<std::size_t>(v.index[i])] = v.value[i];
  if (o.mechanism == TopKMechanism::gm) {
    double ss = 0.0;
    for (const double x : value) ss += x * x;
    const double div = std::max(1.0, std::sqrt(ss) / o.clip);
    for (double& x : value) x /= div;
  } else {
    for (double& x : value) x = std::min(x, o.clip);
  }
  std::vector<std::pair<double, std::int64_t>> score(value.size());
  std::normal_distribution<double> normal(0.0, o.noise_scale);
  std::extreme_value_distribution<double> gumbel(0.0, o.noise_scale);  // Gumbel (max), scale beta
  for (std::size_t j = 0; j < value.size(); ++j)
    score[j] = {value[j] + (o.mechanism == TopKMechanism::gm ? normal(gen) : gumbel(gen)), static_cast<std::int64_t>(j)};
  std::sort(score.begin(), score.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  // Laplace(0, b) as the difference of two Exp(1/b) (an independent construction).
  std::exponential_distribution<double> expo(1.0 / o.value_noise_scale);
  TopK out;
  for (int i = 0; i < o.k; ++i) {
    const auto j = score[static_cast<std::size_t>(i)].second;
    out.index.push_back(j);
    switch (o.mechanism) {
      case TopKMechanism::gm: out.value.push_back(score[static_cast<std::size_t>(i)].first); break;
      case TopKMechanism::em0: out.value.push_back(1.0 / o.k); break;
      case TopKMechanism::em1: out.value.push_back(value[static_cast<std::size_t>(j)] + expo(gen) - expo(gen)); break;
    }
  }
  return out;
}

// Chi-square critical value (upper, at z = kZ) by Wilson-Hilferty.
double chi2_critical(int df) {
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + kZ * std::sqrt(a), 3.0);
}

// Two-sample homogeneity test for equal sample sizes: X = sum (a_i - b_i)^2 / (a_i + b_i),
// chi-square with (cells - 1) df. Cells with a_i + b_i < 40 are pooled into one.
template <class Key>
void expect_same_distribution(const std::map<Key, double>& a, const std::map<Key, double>& b, const std::string& what) {
  std::map<Key, std::pair<double, double>> cells;
  for (const auto& [k, n] : a) cells[k].first += n;
  for (const auto& [k, n] : b) cells[k].second += n;
  double pooled_a = 0.0, pooled_b = 0.0, x = 0.0;
  int used = 0;
  for (const auto& [k, ab] : cells) {
    if (ab.first + ab.second < 40.0) {
      pooled_a += ab.first;
      pooled_b += ab.second;
      continue;
    }
    x += (ab.first - ab.second) * (ab.first - ab.second) / (ab.first + ab.second);
    ++used;
  }
  if (pooled_a + pooled_b > 0.0) {
    x += (pooled_a - pooled_b) * (pooled_a - pooled_b) / (pooled_a + pooled_b);
    ++used;
  }
  ASSERT_GE(used, 2) << what;
  EXPECT_LT(x, chi2_critical(used - 1)) << what << ": chi-square " << x << " with " << used - 1 << " df";
}

struct Summary {
  std::map<std::int64_t, double> first;
  std::map<std::pair<std::int64_t, std::int64_t>, double> pair;  // unordered top-2
  std::vector<double> top_value;
};

void record(Summary& s, const TopK& t) {
  s.first[t.index[0]] += 1.0;
  s.pair[{std::min(t.index[0], t.index[1]), std::max(t.index[0], t.index[1])}] += 1.0;
  s.top_value.push_back(t.value[0]);
}

std::pair<Summary, Summary> run_both(const SparseVector& v, std::int64_t universe, const TopKOptions& o, int trials,
                                     std::uint8_t key) {
  Summary fast, slow;
  SecureStream rng(key_of(key), StreamPurpose::noise, 0, 0);
  std::mt19937_64 gen(1000 + key);
  for (int t = 0; t < trials; ++t) {
    const TopK f = dp_topk(v, universe, o, rng);
    EXPECT_EQ(f.index.size(), static_cast<std::size_t>(o.k));
    EXPECT_NE(f.index[0], f.index[1]);
    record(fast, f);
    record(slow, direct_topk(v, universe, o, gen));
  }
  return {fast, slow};
}

double mean(const std::vector<double>& x) {
  double s = 0.0;
  for (const double v : x) s += v;
  return s / static_cast<double>(x.size());
}
double central_moment(const std::vector<double>& x, int k) {
  const double m = mean(x);
  double s = 0.0;
  for (const double v : x) s += std::pow(v - m, k);
  return s / static_cast<double>(x.size());
}

void expect_same_mean_and_variance(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  const double n = static_cast<double>(a.size());
  const double va = central_moment(a, 2), vb = central_moment(b, 2);
  EXPECT_LT(std::fabs(mean(a) - mean(b)), kZ * std::sqrt(va / n + vb / n)) << what << ": means " << mean(a) << " vs " << mean(b);
  // Var(sample variance) ~ (m4 - m2^2) / n.
  const double sa = (central_moment(a, 4) - va * va) / n, sb = (central_moment(b, 4) - vb * vb) / n;
  EXPECT_LT(std::fabs(va - vb), kZ * std::sqrt(sa + sb)) << what << ": variances " << va << " vs " << vb;
}

struct Case {
  std::string name;
  SparseVector v;
  std::int64_t universe;
  TopKOptions o;
};

std::vector<Case> cases() {
  std::vector<Case> cs;
  TopKOptions gm;
  gm.mechanism = TopKMechanism::gm;
  gm.k = 2;
  gm.clip = 3.0;  // the vector's norm is 3.8: clipped by 3/3.8
  gm.noise_scale = 1.0;
  const auto v = make_vec({{2, 3.0}, {5, 2.0}, {7, 1.0}, {11, 0.5}, {13, 0.5}});
  cs.push_back({"gm U=20", v, 20, gm});
  TopKOptions em0 = gm;
  em0.mechanism = TopKMechanism::em0;
  em0.clip = 1.0;  // entries 2 and 5 clipped to 1
  em0.noise_scale = 0.4;
  cs.push_back({"em0 U=20", v, 20, em0});
  TopKOptions em1 = em0;
  em1.mechanism = TopKMechanism::em1;
  em1.value_noise_scale = 0.3;
  cs.push_back({"em1 U=20", v, 20, em1});
  // Support almost fills the universe: n = 2 zero entries (k of them exactly), rejection busy.
  const auto dense = make_vec({{0, 0.1}, {1, 0.9}, {2, 0.2}, {4, 0.0}, {5, 0.5}, {6, 0.3}, {7, 1.2}, {8, 0.05}, {9, 0.4}, {11, 0.7}});
  cs.push_back({"gm U=12 n=2", dense, 12, gm});
  cs.push_back({"em0 U=12 n=2", dense, 12, em0});
  // Empty support: everything is order statistics (uniform over indices).
  cs.push_back({"gm U=25 empty", SparseVector{}, 25, gm});
  cs.push_back({"em0 U=25 empty", SparseVector{}, 25, em0});
  // A larger universe with a few strong entries (DPAR-like: tail mass matters).
  TopKOptions gm40 = gm;
  gm40.clip = 4.0;
  gm40.noise_scale = 1.0;
  cs.push_back({"gm U=40", make_vec({{3, 2.5}, {17, 2.0}, {30, 1.5}}), 40, gm40});
  TopKOptions em40 = em0;
  em40.noise_scale = 0.3;
  cs.push_back({"em0 U=40", make_vec({{3, 1.0}, {17, 0.8}, {30, 0.6}}), 40, em40});
  return cs;
}

TEST(DpTopK, SelectionMatchesTheDirectMechanism) {
  const int trials = 50000;
  std::uint8_t key = 1;
  for (const auto& c : cases()) {
    const auto [fast, slow] = run_both(c.v, c.universe, c.o, trials, key++);
    expect_same_distribution(fast.first, slow.first, c.name + " first index");
    expect_same_distribution(fast.pair, slow.pair, c.name + " top-2 pair");
    if (c.o.mechanism != TopKMechanism::em0) expect_same_mean_and_variance(fast.top_value, slow.top_value, c.name + " top value");
  }
}

TEST(DpTopK, Em0ValuesAreExactlyOneOverK) {
  SecureStream rng(key_of(9), StreamPurpose::noise, 0, 0);
  TopKOptions o;
  o.mechanism = TopKMechanism::em0;
  for (const int k : {1, 2, 3, 7}) {
    o.k = k;
    const auto t = dp_topk(make_vec({{1, 0.5}, {4, 0.01}}), 1000, o, rng);
    ASSERT_EQ(t.value.size(), static_cast<std::size_t>(k));
    for (const double x : t.value) EXPECT_EQ(x, 1.0 / k);
  }
}

// The largest of n iid N(0, sigma^2) and the second largest, against Phi^n and
// Phi^n + n Phi^{n-1} (1 - Phi) at a grid of points (Phi from std::erfc).
TEST(DpTopK, GaussianTailMaximaFollowTheExactOrderStatisticDistributions) {
  TopKOptions o;
  o.mechanism = TopKMechanism::gm;
  o.k = 2;
  o.noise_scale = 2.0;
  for (const std::int64_t n : {std::int64_t{1000000}, std::int64_t{1000000000}}) {
    SecureStream rng(key_of(21), StreamPurpose::noise, static_cast<std::uint64_t>(n), 0);
    const int trials = 20000;
    std::vector<double> top, second;
    for (int t = 0; t < trials; ++t) {
      const auto r = dp_topk(SparseVector{}, n, o, rng);
      top.push_back(r.value[0]);
      second.push_back(r.value[1]);
      EXPECT_GE(r.value[0], r.value[1]);
    }
    for (double x = 3.5; x <= 7.0; x += 0.25) {
      const double qx = 0.5 * std::erfc(x / std::sqrt(2.0));        // 1 - Phi(x), standard units
      const double log_fn = static_cast<double>(n) * std::log1p(-qx);  // ln Phi^n
      const double f1 = std::exp(log_fn);
      const double f2 = std::min(1.0, f1 * (1.0 + static_cast<double>(n) * qx / (1.0 - qx)));
      const double thr = x * o.noise_scale;
      const double c1 = static_cast<double>(std::count_if(top.begin(), top.end(), [&](double v) { return v <= thr; })) / trials;
      const double c2 = static_cast<double>(std::count_if(second.begin(), second.end(), [&](double v) { return v <= thr; })) / trials;
      EXPECT_LE(std::fabs(c1 - f1), kZ * std::sqrt(f1 * (1 - f1) / trials) + 1e-12) << "n " << n << " x " << x;
      EXPECT_LE(std::fabs(c2 - f2), kZ * std::sqrt(f2 * (1 - f2) / trials) + 1e-12) << "n " << n << " x " << x;
    }
  }
}

// Gumbel-max: entry j comes first with probability e^{u_j / beta} / sum_i e^{u_i / beta}
// (the exponential mechanism; Durfee & Rogers 2019), the n zero entries contributing n.
TEST(DpTopK, GumbelFirstChoiceFollowsTheSoftmaxInAHugeUniverse) {
  const std::int64_t universe = std::int64_t{1} << 40;
  TopKOptions o;
  o.mechanism = TopKMechanism::em0;
  o.k = 2;
  o.noise_scale = 1.0;
  o.clip = 100.0;
  const double ln_n = std::log(static_cast<double>(universe - 2));
  const auto v = make_vec({{123456789, ln_n}, {987654321012, ln_n + 1.0}});
  const double w0 = std::exp(0.0), w1 = std::exp(1.0), wt = 1.0;  // weights divided by n
  const double total = w0 + w1 + wt;
  const double p[3] = {w0 / total, w1 / total, wt / total};
  SecureStream rng(key_of(33), StreamPurpose::noise, 0, 0);
  const int trials = 30000;
  double count[3] = {0, 0, 0};
  for (int t = 0; t < trials; ++t) {
    const auto r = dp_topk(v, universe, o, rng);
    count[r.index[0] == 123456789 ? 0 : r.index[0] == 987654321012 ? 1 : 2] += 1.0;
    EXPECT_GE(r.index[0], 0);
    EXPECT_LT(r.index[0], universe);
  }
  double x = 0.0;
  for (int i = 0; i < 3; ++i) x += (count[i] - trials * p[i]) * (count[i] - trials * p[i]) / (trials * p[i]);
  EXPECT_LT(x, chi2_critical(2)) << count[0] << " " << count[1] << " " << count[2];
}

TEST(DpTopK, ClippingIsApplied) {
  SecureStream rng(key_of(5), StreamPurpose::noise, 0, 0);
  const auto huge = make_vec({{3, 1e6}, {5, 1.0}});
  TopKOptions gm;
  gm.mechanism = TopKMechanism::gm;
  gm.clip = 0.01;
  gm.noise_scale = 1e-9;
  for (int t = 0; t < 100; ++t) {
    const auto r = dp_topk(huge, 1000, gm, rng);
    ASSERT_EQ(r.index[0], 3);
    EXPECT_NEAR(r.value[0], 0.01, 1e-7);  // the l2 norm is clipped to C1 = 0.01
  }
  TopKOptions em1;
  em1.mechanism = TopKMechanism::em1;
  em1.clip = 0.001;
  em1.noise_scale = 1e-9;
  em1.value_noise_scale = 1e-12;
  const auto one_huge = make_vec({{3, 1e6}, {5, 1e-5}});
  for (int t = 0; t < 100; ++t) {
    const auto r = dp_topk(one_huge, 1000, em1, rng);
    ASSERT_EQ(r.index[0], 3);
    EXPECT_NEAR(r.value[0], 0.001, 1e-10);  // the clipped value C2, not the raw 1e6, not Gumbel-noised
    ASSERT_EQ(r.index[1], 5);
    EXPECT_NEAR(r.value[1], 1e-5, 1e-10);   // below C2: unchanged
  }
}

TEST(DpTopK, SameKeySameOutputOtherKeyOtherOutput) {
  const auto v = make_vec({{1, 0.004}, {2, 0.002}, {40, 0.001}});
  for (const auto m : {TopKMechanism::gm, TopKMechanism::em0, TopKMechanism::em1}) {
    TopKOptions o;
    o.mechanism = m;
    o.clip = m == TopKMechanism::gm ? 0.01 : 0.001;
    o.noise_scale = 0.001;
    o.value_noise_scale = 0.002;
    SecureStream a(key_of(7), StreamPurpose::noise, 3, 1), b(key_of(7), StreamPurpose::noise, 3, 1),
        c(key_of(8), StreamPurpose::noise, 3, 1);
    bool any_difference = false;
    for (int t = 0; t < 50; ++t) {
      const auto ra = dp_topk(v, 1000000, o, a);
      const auto rb = dp_topk(v, 1000000, o, b);
      const auto rc = dp_topk(v, 1000000, o, c);
      EXPECT_EQ(ra.index, rb.index);
      EXPECT_EQ(ra.value, rb.value);
      any_difference = any_difference || ra.index != rc.index || ra.value != rc.value;
    }
    EXPECT_TRUE(any_difference);
  }
}

TEST(DpTopK, HugeUniverseIsFast) {
  SparseVector v;
  for (int i = 0; i < 100; ++i) {
    v.index.push_back(std::int64_t{7} * 1000 * 1000 * i + 13);
    v.value.push_back(1e-3 / (i + 1));
  }
  SecureStream rng(key_of(11), StreamPurpose::noise, 0, 0);
  for (const auto m : {TopKMechanism::gm, TopKMechanism::em0, TopKMechanism::em1}) {
    TopKOptions o;
    o.mechanism = m;
    const int calls = 200;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) {
      const auto r = dp_topk(v, 1000000000, o, rng);
      ASSERT_EQ(r.index.size(), 2u);
    }
    const double per_call_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / calls;
    EXPECT_LT(per_call_ms, 10.0);
    RecordProperty("per_call_ms_mechanism_" + std::to_string(static_cast<int>(m)), std::to_string(per_call_ms));
  }
}

// A universe that is a subset of [0, range) (DPAR's graph sampling): the same distribution as
// the direct mechanism over the members alone, and every reported index a member.
TEST(DpTopK, ASubsetUniverseMatchesTheDirectMechanismOverItsMembers) {
  const std::int64_t range = 30, stride = 3, members = 10;  // members 0, 3, ..., 27
  const TopKUniverse u{range, members, [](std::int64_t j) { return j % 3 == 0; }};
  const auto v = make_vec({{3, 2.0}, {12, 1.0}, {21, 0.5}});
  const auto compact = make_vec({{1, 2.0}, {4, 1.0}, {7, 0.5}});  // index j / 3
  TopKOptions gm;
  gm.mechanism = TopKMechanism::gm;
  gm.clip = 2.0;
  gm.noise_scale = 1.0;
  TopKOptions em0 = gm;
  em0.mechanism = TopKMechanism::em0;
  em0.clip = 1.0;
  em0.noise_scale = 0.4;
  std::uint8_t key = 60;
  for (const auto& o : {gm, em0}) {
    Summary fast, slow;
    SecureStream rng(key_of(key), StreamPurpose::noise, 0, 0);
    std::mt19937_64 gen(2000 + key++);
    for (int t = 0; t < 50000; ++t) {
      const TopK f = dp_topk(v, u, o, rng);
      for (auto j : f.index) ASSERT_EQ(j % stride, 0) << "index " << j << " is not a member";
      record(fast, f);
      TopK d = direct_topk(compact, members, o, gen);
      for (auto& j : d.index) j *= stride;
      record(slow, d);
    }
    const std::string what = o.mechanism == TopKMechanism::gm ? "gm subset" : "em0 subset";
    expect_same_distribution(fast.first, slow.first, what + " first index");
    expect_same_distribution(fast.pair, slow.pair, what + " top-2 pair");
  }
  // A support index outside the members, or members outside [1, range]: refused.
  SecureStream rng(key_of(70), StreamPurpose::noise, 0, 0);
  EXPECT_THROW(dp_topk(make_vec({{4, 1.0}}), u, gm, rng), std::invalid_argument);
  EXPECT_THROW(dp_topk(v, TopKUniverse{range, range + 1, u.is_member}, gm, rng), std::invalid_argument);
  EXPECT_THROW(dp_topk(v, TopKUniverse{range, members, {}}, gm, rng), std::invalid_argument);
  // A top-K wider than the zero entries left, or than the universe: min(k, members) entries,
  // never a refusal (the fit of a private support must not decide anything).
  TopKOptions big = gm;
  big.k = 8;  // 3 support + 8 > 10 members
  const TopK eight = dp_topk(v, u, big, rng);
  EXPECT_EQ(eight.index.size(), 8u);
  big.k = 12;  // more than the 10 members: every member, once
  TopK all = dp_topk(v, u, big, rng);
  ASSERT_EQ(all.index.size(), static_cast<std::size_t>(members));
  std::sort(all.index.begin(), all.index.end());
  EXPECT_EQ(std::adjacent_find(all.index.begin(), all.index.end()), all.index.end());
  for (auto j : all.index) EXPECT_TRUE(u.is_member(j)) << j;
}

TEST(DpTopK, RejectsBadOptionsNamingThem) {
  SecureStream rng(key_of(1), StreamPurpose::noise, 0, 0);
  const auto v = make_vec({{1, 0.5}, {3, 0.2}});
  auto expect_throw_naming = [&](const SparseVector& vec, std::int64_t u, const TopKOptions& o, const std::string& name) {
    try {
      dp_topk(vec, u, o, rng);
      ADD_FAILURE() << "no throw for " << name;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  TopKOptions o;
  o.k = 0; expect_throw_naming(v, 10, o, "k");
  o = {}; o.clip = 0.0; expect_throw_naming(v, 10, o, "clip");
  o = {}; o.clip = -1.0; expect_throw_naming(v, 10, o, "clip");
  o = {}; o.clip = std::nan(""); expect_throw_naming(v, 10, o, "clip");
  o = {}; o.noise_scale = 0.0; expect_throw_naming(v, 10, o, "noise_scale");
  o = {}; o.noise_scale = -2.0; expect_throw_naming(v, 10, o, "noise_scale");
  o = {}; o.mechanism = TopKMechanism::em1; o.value_noise_scale = 0.0; expect_throw_naming(v, 10, o, "value_noise_scale");
  o = {}; expect_throw_naming(make_vec({{1, 0.5}, {10, 0.2}}), 10, o, "universe");
  o = {}; expect_throw_naming(make_vec({{-1, 0.5}}), 10, o, "universe");
  o = {}; expect_throw_naming(make_vec({{3, 0.5}, {1, 0.2}}), 10, o, "increasing");
  o = {}; expect_throw_naming(make_vec({{3, -0.5}}), 10, o, "value");
  o = {}; o.k = 9; EXPECT_EQ(dp_topk(v, 10, o, rng).index.size(), 9u);  // |support| + k = 11 > 10: still k entries
  o = {}; expect_throw_naming(v, 0, o, "universe");
  o = {}; o.k = 8; EXPECT_NO_THROW(dp_topk(v, 10, o, rng));    // |support| + k = 10 = U
}

// ---- the samplers ----------------------------------------------------------------------------

TEST(DpTopKSamplers, UpperNormalQuantileInvertsErfc) {
  using topk_detail::normal_upper_quantile;
  // Well-known values: Q^{-1}(0.025) = 1.959963984540054, Q^{-1}(1e-9) = 5.997807015007686.
  EXPECT_NEAR(normal_upper_quantile(0.025), 1.959963984540054, 1e-14);
  EXPECT_NEAR(normal_upper_quantile(1e-9), 5.997807015007686, 1e-13);
  EXPECT_EQ(normal_upper_quantile(0.5), 0.0);
  for (const double t : {0.49, 0.3, 0.1, 0.02425, 0.02, 1e-3, 1e-6, 1e-9, 1e-12, 1e-20, 1e-50, 1e-100, 1e-200, 1e-300,
                         0.7, 0.99, 1.0 - 1e-9}) {
    const double x = normal_upper_quantile(t);
    const double back = 0.5 * std::erfc(x / std::sqrt(2.0));
    // Relative error of Q(x) is about x * dx: allow a few ulps of x times x (plus 1e-15).
    const double tol = (1e-15 + 8.0 * std::fabs(x) * std::fabs(x) * 2.2e-16) * std::max(t, 1e-300);
    EXPECT_NEAR(back, t, t < 0.5 ? tol + 1e-15 * t : 1e-15) << "t = " << t;
  }
}

TEST(DpTopKSamplers, LogCdfMapsKeepPrecisionNearOne) {
  // u = 1 - 1e-9 given as ln u = log1p(-1e-9): Phi^{-1}(u) = Q^{-1}(1e-9).
  EXPECT_NEAR(topk_detail::gaussian_from_log_cdf(std::log1p(-1e-9), 1.0), 5.997807015007686, 1e-12);
  EXPECT_NEAR(topk_detail::gaussian_from_log_cdf(std::log(0.025), 2.0), -2.0 * 1.959963984540054, 1e-13);
  // Gumbel: F(x) = exp(-exp(-x/beta)) at x = 20 beta is ln F = -e^{-20}.
  EXPECT_NEAR(topk_detail::gumbel_from_log_cdf(-std::exp(-20.0), 0.5), 10.0, 1e-13);
}

TEST(DpTopKSamplers, SamplersHaveTheirDistributions) {
  SecureStream rng(key_of(77), StreamPurpose::noise, 0, 0);
  const int n = 200000;
  // P(Z <= 1) = Phi(1); P(G <= 0) = e^{-1} for Gumbel; P(L <= -b) = e^{-1} / 2 for Laplace(b).
  double cz = 0, cg = 0, cl = 0, cu = 0;
  for (int i = 0; i < n; ++i) {
    cz += topk_detail::standard_normal(rng) <= 1.0;
    cg += topk_detail::gumbel(rng, 3.0) <= 0.0;
    cl += topk_detail::laplace(rng, 2.0) <= -2.0;
    const double u = topk_detail::open_uniform(rng);
    EXPECT_GT(u, 0.0);
    EXPECT_LT(u, 1.0);
    cu += u <= 0.25;
  }
  auto check = [&](double c, double p, const char* what) {
    EXPECT_LE(std::fabs(c / n - p), kZ * std::sqrt(p * (1 - p) / n)) << what;
  };
  check(cz, 0.5 * std::erfc(-1.0 / std::sqrt(2.0)), "normal");
  check(cg, std::exp(-1.0), "gumbel");
  check(cl, 0.5 * std::exp(-1.0), "laplace");
  check(cu, 0.25, "uniform");
}

TEST(DpTopKSamplers, TopOrderStatisticsOfUniforms) {
  // The maximum of n = 5 uniforms: P(max <= 0.8) = 0.8^5; the second: 0.8^5 + 5 0.8^4 0.2.
  SecureStream rng(key_of(78), StreamPurpose::noise, 0, 0);
  const int trials = 100000;
  double c1 = 0, c2 = 0;
  for (int t = 0; t < trials; ++t) {
    const auto l = topk_detail::top_order_statistics_log_cdf(rng, 5, 2);
    ASSERT_EQ(l.size(), 2u);
    EXPECT_GE(l[0], l[1]);
    c1 += std::exp(l[0]) <= 0.8;
    c2 += std::exp(l[1]) <= 0.8;
  }
  const double p1 = std::pow(0.8, 5), p2 = p1 + 5 * std::pow(0.8, 4) * 0.2;
  EXPECT_LE(std::fabs(c1 / trials - p1), kZ * std::sqrt(p1 * (1 - p1) / trials));
  EXPECT_LE(std::fabs(c2 / trials - p2), kZ * std::sqrt(p2 * (1 - p2) / trials));
}

}  // namespace
}  // namespace dpgnn::sampling
