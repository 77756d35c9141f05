// The PLD accountant (pld_accountant.h, Accountant with AccountantKind::kPld, calibration):
// against tests/privacy/reference/pld_reference.csv (computed by pld_reference.py, an
// independent numpy/scipy implementation: closed form, direct integration, and fine-grid
// compositions giving a [pessimistic, optimistic] interval), published values, the RDP
// accountant (PLD <= RDP) and monotonicity.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dpgnn/privacy/accountant.h"
#include "dpgnn/privacy/calibration.h"
#include "dpgnn/privacy/pld.h"
#include "dpgnn/privacy/pld_accountant.h"
#include "dpgnn/privacy/rdp.h"

namespace dpgnn::privacy {
namespace {

struct RefRow {
  std::string scheme, method;
  double q = 0, z = 0, delta = 0, eps_lo = 0, eps_hi = 0;
  std::int64_t steps = 0;
};

std::vector<RefRow> read_pld_reference() {
  std::ifstream in(std::string(DPGNN_SOURCE_DIR) + "/tests/privacy/reference/pld_reference.csv");
  EXPECT_TRUE(in.good());
  std::string line;
  std::getline(in, line);  // header: scheme,q,z,steps,delta,method,eps_lo,eps_hi
  std::vector<RefRow> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ss(line);
    std::string c[8];
    for (auto& cell : c) std::getline(ss, cell, ',');
    rows.push_back({c[0], c[5], std::stod(c[1]), std::stod(c[2]), std::stod(c[4]), std::stod(c[6]),
                    std::stod(c[7]), std::stoll(c[3])});
  }
  EXPECT_GE(rows.size(), 20u);
  return rows;
}

// The reference rows' q is m/n rounded to 10 digits; wor needs integers: n = 10^6 scale.
Mechanism mechanism_of(const std::string& scheme, double q, double z) {
  if (scheme == "gaussian") return Mechanism::gaussian(z);
  if (scheme == "poisson") return Mechanism::poisson(q, z);
  if (std::fabs(q - 256.0 / 60000) < 1e-9) return Mechanism::wor(60000, 256, z);
  return Mechanism::wor(1000000, static_cast<std::int64_t>(std::llround(q * 1e6)), z);
}

double rdp_epsilon(const Mechanism& m, std::int64_t steps, double delta) {
  Accountant rdp(AccountantKind::kRdp);
  rdp.step(m, steps);
  return rdp.epsilon(delta).epsilon;
}

// An upper bound on the exact epsilon (>= the reference's optimistic end), and tight
// (<= the pessimistic end + 0.2%); never above RDP.
TEST(PldAccountant, MatchesIndependentReference) {
  for (const RefRow& r : read_pld_reference()) {
    const Mechanism m = mechanism_of(r.scheme, r.q, r.z);
    const double e = pld_epsilon({{m, r.steps}}, r.delta);
    const std::string what = r.scheme + " q=" + std::to_string(r.q) + " z=" + std::to_string(r.z) +
                             " T=" + std::to_string(r.steps) + " delta=" + std::to_string(r.delta) + " " + r.method;
    EXPECT_GE(e, r.eps_lo * (1.0 - 1e-7)) << what;
    EXPECT_LE(e, r.eps_hi * 1.002) << what;
    EXPECT_LE(e, rdp_epsilon(m, r.steps, r.delta)) << what;
  }
}

// Issue 22's example: RDP prints 4.33, the proven wor pair gives about 2.53.
TEST(PldAccountant, IssueExampleWor) {
  const Mechanism m = Mechanism::wor(60000, 256, 1.1);
  const double e = pld_epsilon({{m, 10000}}, 1e-5);
  EXPECT_GT(e, 2.45);
  EXPECT_LT(e, 2.60);
  EXPECT_NEAR(rdp_epsilon(m, 10000, 1e-5), 4.33, 0.01);
}

// The MNIST anchor of ../shared/reference/accountant/README.md: Poisson q = 256/60000,
// z = 1.1, 14063 steps, delta 1e-5: 2.3818 with a PLD accountant (dp_accounting).
TEST(PldAccountant, MnistAnchor) {
  const double e = pld_epsilon({{Mechanism::poisson(256.0 / 60000, 1.1), 14063}}, 1e-5);
  EXPECT_NEAR(e, 2.3818, 0.2e-2 * 2.3818);
}

TEST(PldAccountant, NeverAboveRdpOnAGrid) {
  for (double z : {0.8, 1.5, 4.0, 20.0})
    for (std::int64_t steps : {10, 1000, 14063}) {
      const double delta = steps == 1000 ? 1e-7 : 1e-5;
      for (const Mechanism& m : {Mechanism::wor(10000, 100, z), Mechanism::wor(2000, 500, z),
                                 Mechanism::poisson(0.02, z), Mechanism::gaussian(z)}) {
        const double e = pld_epsilon({{m, steps}}, delta);
        EXPECT_LE(e, rdp_epsilon(m, steps, delta) * (1 + 1e-12)) << m.to_string() << " T=" << steps;
      }
    }
}

// The count mixture (dpgnn, groupwor) and Laplace pairs against
// tests/privacy/reference/pld_reference_groups.csv (pld_reference_groups.py: independent
// numpy/scipy compositions with losses rounded down / up, which bracket the exact value):
// never below the optimistic end, within 0.2% above the pessimistic end.
TEST(PldAccountant, GroupAndLaplaceMatchIndependentReference) {
  std::ifstream in(std::string(DPGNN_SOURCE_DIR) + "/tests/privacy/reference/pld_reference_groups.csv");
  ASSERT_TRUE(in.good());
  std::string line;
  std::getline(in, line);  // scheme,n,m,g,z,steps,delta,eps_lo,eps_hi
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ss(line);
    std::string c[9];
    for (auto& cell : c) std::getline(ss, cell, ',');
    const std::int64_t n = std::stoll(c[1]), m = std::stoll(c[2]), g = std::stoll(c[3]);
    const double z = std::stod(c[4]), delta = std::stod(c[6]), lo = std::stod(c[7]), hi = std::stod(c[8]);
    const Mechanism mech = c[0] == "laplace" ? Mechanism::laplace(z)
                           : c[0] == "groupwor" ? Mechanism::group_wor(n, m, g, z)
                                                : Mechanism::dpgnn(n, m, 3, 2, z);  // N(3, 2) = 13
    if (c[0] == "dpgnn") {
      ASSERT_EQ(mech.group_size(), g);
    }
    const double e = pld_epsilon({{mech, std::stoll(c[5])}}, delta);
    EXPECT_GE(e, lo * (1 - 1e-9)) << line;
    EXPECT_LE(e, hi * 1.002) << line;
    ++rows;
  }
  EXPECT_GE(rows, 8);
}

// The count-mixture pair (dpgnn, groupwor) and the Laplace pair: never above RDP (for the
// count mixture RDP is the exact Renyi divergence of the same pair, so PLD can only be
// tighter), monotone in the noise and the steps, and a history mixing them with DRW steps
// (DPAR: a Laplace/Gaussian release, then groupwor steps) is accounted by PLD.
TEST(PldAccountant, GroupSchemesAndLaplaceNeverAboveRdpAndMonotone) {
  for (double z : {0.8, 8.0})
    for (std::int64_t steps : {1, 1000}) {
      const double delta = z > 1 ? 1e-7 : 1e-5;
      for (const Mechanism& m : {Mechanism::dpgnn(5000, 200, 3, 2, z), Mechanism::dpgnn(800, 700, 2, 1, z),
                                 Mechanism::group_wor(20000, 256, 40, z), Mechanism::laplace(z)}) {
        const double e = pld_epsilon({{m, steps}}, delta);
        EXPECT_GT(e, 0.0) << m.to_string();
        EXPECT_LE(e, rdp_epsilon(m, steps, delta) * (1 + 1e-12)) << m.to_string() << " T=" << steps;
      }
    }
  for (const auto& make : std::vector<Mechanism (*)(double)>{
           [](double z) { return Mechanism::dpgnn(5000, 200, 3, 2, z); },
           [](double z) { return Mechanism::group_wor(20000, 256, 40, z); }, [](double z) { return Mechanism::laplace(z); }}) {
    double prev = 1e300;
    for (double z : {0.8, 2.0, 5.0}) {
      const double e = pld_epsilon({{make(z), 100}}, 1e-5);
      EXPECT_LT(e, prev) << make(z).to_string();
      prev = e;
    }
    prev = 0.0;
    for (std::int64_t t : {1, 10, 300}) {
      const double e = pld_epsilon({{make(2.0), t}}, 1e-5);
      EXPECT_GT(e, prev) << make(2.0).to_string();
      prev = e;
    }
  }
  // All g examples always drawn (m = n): the plain Gaussian with mu = 1/z, exactly.
  EXPECT_DOUBLE_EQ(pld_epsilon({{Mechanism::group_wor(300, 300, 7, 2.0), 100}}, 1e-5),
                   gdp_epsilon(std::sqrt(100.0) / 2.0, 1e-5));
  // One Laplace step: pure (1/z)-DP, delta(eps) = 1 - e^{(eps - 1/z)/2} exactly.
  EXPECT_NEAR(pld_delta({{Mechanism::laplace(2.0), 1}}, 0.2), -std::expm1(0.5 * (0.2 - 0.5)), 2e-4);
  EXPECT_EQ(pld_delta({{Mechanism::laplace(2.0), 1}}, 0.5 + 1e-3), 0.0);
  Accountant dpar(AccountantKind::kPld);
  dpar.step(Mechanism::gaussian(30.0), 2708);
  dpar.step(Mechanism::group_wor(2708, 2708 / 4, 12, 3.0), 200);
  EXPECT_TRUE(dpar.uses_pld());
  Accountant dpar_rdp(AccountantKind::kRdp);
  dpar_rdp.step(Mechanism::gaussian(30.0), 2708);
  dpar_rdp.step(Mechanism::group_wor(2708, 2708 / 4, 12, 3.0), 200);
  EXPECT_LT(dpar.epsilon(1e-5).epsilon, dpar_rdp.epsilon(1e-5).epsilon);
}

TEST(PldAccountant, MonotoneInNoiseStepsAndRate) {
  const double d = 1e-5;
  double prev = 1e300;
  for (double z : {0.8, 1.0, 1.3, 2.0, 5.0}) {
    const double e = pld_epsilon({{Mechanism::wor(10000, 100, z), 500}}, d);
    EXPECT_LT(e, prev);
    prev = e;
  }
  prev = 0.0;
  for (std::int64_t t : {1, 10, 100, 1000, 5000}) {
    const double e = pld_epsilon({{Mechanism::wor(10000, 100, 1.0), t}}, d);
    EXPECT_GT(e, prev);
    prev = e;
  }
  prev = 0.0;
  for (std::int64_t m : {10, 50, 100, 1000, 10000}) {
    const double e = pld_epsilon({{Mechanism::wor(10000, m, 1.0), 100}}, d);
    EXPECT_GT(e, prev);
    prev = e;
  }
}

// wor with m = n is the plain Gaussian (exact GDP path); poisson at q = 1 too.
TEST(PldAccountant, FullBatchIsGdp) {
  const double g = gdp_epsilon(std::sqrt(100.0) / 2.0, 1e-5);
  EXPECT_DOUBLE_EQ(pld_epsilon({{Mechanism::wor(500, 500, 2.0), 100}}, 1e-5), g);
  EXPECT_DOUBLE_EQ(pld_epsilon({{Mechanism::gaussian(2.0), 100}}, 1e-5), g);
  EXPECT_DOUBLE_EQ(pld_epsilon({{Mechanism::poisson(1.0, 2.0), 100}}, 1e-5), g);
  // Heterogeneous Gaussians compose as GDP with mu^2 = sum T / z^2.
  EXPECT_NEAR(pld_epsilon({{Mechanism::gaussian(2.0), 50}, {Mechanism::gaussian(1.0), 10}}, 1e-5),
              gdp_epsilon(std::sqrt(50.0 / 4 + 10.0), 1e-5), 1e-12);
}

// Heterogeneous composition equals the homogeneous one when the parts are the same, and
// lies between the homogeneous extremes otherwise.
TEST(PldAccountant, HeterogeneousComposition) {
  const Mechanism a = Mechanism::wor(10000, 100, 1.0), b = Mechanism::wor(12000, 100, 1.0);
  const double split = pld_epsilon({{a, 300}, {a, 200}}, 1e-5);
  EXPECT_NEAR(split, pld_epsilon({{a, 500}}, 1e-5), 1e-9);
  const double mixed = pld_epsilon({{a, 250}, {b, 250}}, 1e-5);
  EXPECT_LT(mixed, pld_epsilon({{a, 500}}, 1e-5));
  EXPECT_GT(mixed, pld_epsilon({{b, 500}}, 1e-5));
  // with Gaussian steps (a full-batch phase) in the history
  const double with_g = pld_epsilon({{a, 250}, {Mechanism::gaussian(10.0), 20}}, 1e-5);
  EXPECT_GT(with_g, pld_epsilon({{a, 250}}, 1e-5));
}

TEST(PldAccountant, KindsAndFallback) {
  EXPECT_EQ(parse_accountant("pld"), AccountantKind::kPld);
  EXPECT_EQ(accountant_name(AccountantKind::kRdp), "rdp");
  EXPECT_THROW(parse_accountant("prv"), std::invalid_argument);
  Accountant pld(AccountantKind::kPld), rdp(AccountantKind::kRdp);
  const Mechanism m = Mechanism::wor(60000, 256, 1.1);
  pld.step(m, 10000);
  rdp.step(m, 10000);
  EXPECT_TRUE(pld.uses_pld());
  EXPECT_TRUE(pld.epsilon(1e-5).pld);
  EXPECT_LT(pld.epsilon(1e-5).epsilon, 0.7 * rdp.epsilon(1e-5).epsilon);
  EXPECT_LT(pld.delta(3.0).delta, rdp.delta(3.0).delta);
  // A scheme without a PLD makes the whole history RDP.
  Accountant mixed(AccountantKind::kPld), mixed_rdp(AccountantKind::kRdp);
  for (Accountant* acc : {&mixed, &mixed_rdp}) {
    acc->step(m, 100);
    acc->step(Mechanism::exponential(5.0), 3);
  }
  EXPECT_FALSE(mixed.uses_pld());
  EXPECT_EQ(mixed.epsilon(1e-5).epsilon, mixed_rdp.epsilon(1e-5).epsilon);
  // The old constructor is the RDP accountant.
  EXPECT_EQ(Accountant().kind(), AccountantKind::kRdp);
}

TEST(PldAccountant, RestoreGivesTheSameEpsilonBitForBit) {
  Accountant a(AccountantKind::kPld);
  a.set_subsample(Subsample::of(20000, 5000));
  for (int i = 0; i < 50; ++i) a.step(Mechanism::wor(10000, 100, 1.2));
  a.step(Mechanism::wor(12000, 100, 1.2), 30);
  Accountant b(AccountantKind::kPld);
  b.restore(a.serialise());
  EXPECT_EQ(a.epsilon(1e-5).epsilon, b.epsilon(1e-5).epsilon);
}

// With a hidden subsample: the PLD epsilon at delta / q, amplified (subsample.h).
TEST(PldAccountant, SubsampleAmplifiesThePldEpsilon) {
  const Mechanism m = Mechanism::wor(10000, 100, 1.0);
  Accountant a(AccountantKind::kPld);
  a.set_subsample(Subsample::of(1000, 250));
  a.step(m, 400);
  const double inner = pld_epsilon({{m, 400}}, 1e-5 / 0.25);
  EXPECT_NEAR(a.epsilon(1e-5).epsilon, amplified_epsilon(inner, 0.25), 1e-12);
  // The subsample set after a first epsilon() is not hidden by a cached value.
  Accountant b(AccountantKind::kPld);
  b.step(m, 400);
  const double before = b.epsilon(1e-5).epsilon;
  b.set_subsample(Subsample::of(1000, 250));
  EXPECT_LT(b.epsilon(1e-5).epsilon, before);
  EXPECT_EQ(b.epsilon(1e-5).epsilon, a.epsilon(1e-5).epsilon);
}

// would_exceed agrees with epsilon() around the budget, and is cheap once the budget is known.
TEST(PldAccountant, WouldExceedMatchesEpsilonAndIsCheap) {
  const Mechanism m = Mechanism::wor(60000, 256, 1.1);
  const double target = 2.0, delta = 1e-5;
  Accountant acc(AccountantKind::kPld);
  acc.step(m, 1);
  ASSERT_FALSE(acc.would_exceed(target, delta, m));  // computes the budget
  const StepsCalibration c = calibrate_steps(m, target, delta, std::int64_t{1} << 40, {}, Conversion::kBalle,
                                             AccountantKind::kPld);
  ASSERT_GT(c.steps, 1000);
  // Just below and at the budget: steps fit; one more does not.
  Accountant probe(AccountantKind::kPld);
  probe.step(m, c.steps - 1);
  EXPECT_FALSE(probe.would_exceed(target, delta, m));
  probe.step(m);
  EXPECT_LE(probe.epsilon(delta).epsilon, target);
  EXPECT_TRUE(probe.would_exceed(target, delta, m));
  // Per-step calls from then on cost microseconds (cached budget).
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) (void)acc.would_exceed(target, delta, m);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

// The per-step bound: never below epsilon(), at most the epsilon of ~3% more steps, and
// constant between grid points (so it costs one composition per grid point).
TEST(PldAccountant, EpsilonBoundIsAnUpperBoundOnACoarseGrid) {
  const Mechanism m = Mechanism::wor(60000, 256, 1.1);
  Accountant acc(AccountantKind::kPld);
  acc.step(m, 3000);
  for (std::int64_t k = 3000; k < 3070; k += 7, acc.step(m, 7)) {
    const double b = acc.epsilon_bound(1e-5).epsilon;
    EXPECT_GE(b, acc.epsilon(1e-5).epsilon);
    EXPECT_LE(b, pld_epsilon({{m, k * 103 / 100 + 1}}, 1e-5));
  }
  // 2945 rounds up to the grid point 3008 (grain 2^6 for 12-bit counts).
  Accountant a(AccountantKind::kPld), b(AccountantKind::kPld);
  a.step(m, 2945);
  b.step(m, 3008);
  EXPECT_EQ(a.epsilon_bound(1e-5).epsilon, b.epsilon(1e-5).epsilon);
  Accountant r(AccountantKind::kRdp);
  r.step(m, 2945);
  EXPECT_EQ(r.epsilon_bound(1e-5).epsilon, r.epsilon(1e-5).epsilon);
}

TEST(PldCalibration, NoiseByPldIsLowerAndMeetsTheTarget) {
  const Mechanism m = Mechanism::wor(60000, 256, 1.0);
  CalibrationOptions rdp_opt, pld_opt;
  pld_opt.accountant = AccountantKind::kPld;
  pld_opt.relative_tolerance = 1e-4;
  rdp_opt.relative_tolerance = 1e-4;
  const NoiseCalibration r = calibrate_noise_multiplier(m, 2000, 2.0, 1e-5, rdp_opt);
  const NoiseCalibration p = calibrate_noise_multiplier(m, 2000, 2.0, 1e-5, pld_opt);
  EXPECT_LT(p.noise_multiplier, r.noise_multiplier);
  EXPECT_LE(pld_epsilon({{m.with_noise_multiplier(p.noise_multiplier), 2000}}, 1e-5), 2.0);
  EXPECT_GT(pld_epsilon({{m.with_noise_multiplier(p.noise_multiplier * (1 - 1e-3)), 2000}}, 1e-5), 2.0);
  // calibrate_events by PLD: the same answer for the same single event
  const NoiseCalibration e = calibrate_events(
      [&](double z) { return std::vector<AccountantEvent>{{m.with_noise_multiplier(z), 2000}}; }, 2.0, 1e-5,
      pld_opt);
  EXPECT_EQ(e.noise_multiplier, p.noise_multiplier);
}

}  // namespace
}  // namespace dpgnn::privacy
