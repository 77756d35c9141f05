// Mechanism validation, the exact text round trip, and the single noise convention.
#include <gtest/gtest.h>

#include <cmath>

#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/privacy/noise_convention.h"
#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"

namespace dpgnn::privacy {
namespace {

TEST(Mechanism, TextFormRoundTripsEveryDoubleExactly) {
  for (const Mechanism& m :
       {Mechanism::gaussian(0.1), Mechanism::wor(1000, 7, 1.0 / 3.0),
        Mechanism::poisson(std::nextafter(0.01, 1.0), std::nextafter(1.1, 2.0)),
        Mechanism::dpgnn(90941, 1000, 10, 2, 4.0 * std::atan(1.0)),
        Mechanism::exponential(std::nextafter(1.0 / 3.0, 1.0)), Mechanism::laplace(0.1),
        Mechanism::group_wor(2708, 64, 17, std::sqrt(2.0))}) {
    const Mechanism back = Mechanism::parse(m.to_string());
    EXPECT_TRUE(back == m) << m.to_string();
    EXPECT_EQ(back.to_string(), m.to_string());
  }
  EXPECT_EQ(Mechanism::poisson(0.5, 2.0).to_string(), "poisson q=0.5 z=2");
  EXPECT_EQ(Mechanism::exponential(2.5).to_string(), "exponential z=2.5");
  EXPECT_EQ(Mechanism::laplace(4.0).to_string(), "laplace z=4");
  EXPECT_EQ(Mechanism::group_wor(1000, 10, 5, 1.5).to_string(), "groupwor n=1000 m=10 g=5 z=1.5");
  EXPECT_TRUE(Mechanism::parse("groupwor z=1.5 g=5 m=10 n=1000") ==
              Mechanism::group_wor(1000, 10, 5, 1.5));  // key order is free
  EXPECT_THROW(Mechanism::parse("groupwor n=1000 m=10 z=1.5"), std::invalid_argument);  // no g
  EXPECT_THROW(Mechanism::parse("laplace q=0.5 z=1"), std::invalid_argument);
  EXPECT_THROW(Mechanism::parse("exponential"), std::invalid_argument);
}

TEST(Mechanism, NewSchemesHaveNamesOrderAndGroupSizes) {
  for (Scheme s : {Scheme::kGaussian, Scheme::kWor, Scheme::kPoisson, Scheme::kDpGnn,
                   Scheme::kExponential, Scheme::kLaplace, Scheme::kGroupWor})
    EXPECT_EQ(parse_scheme(scheme_name(s)), s);
  EXPECT_EQ(scheme_name(Scheme::kExponential), "exponential");
  EXPECT_EQ(scheme_name(Scheme::kLaplace), "laplace");
  EXPECT_EQ(scheme_name(Scheme::kGroupWor), "groupwor");
  const Mechanism e = Mechanism::exponential(2.0), l = Mechanism::laplace(2.0);
  const Mechanism g5 = Mechanism::group_wor(100, 10, 5, 2.0), g6 = Mechanism::group_wor(100, 10, 6, 2.0);
  EXPECT_FALSE(e == l);  // same z, different scheme
  EXPECT_TRUE(e < l || l < e);
  EXPECT_FALSE(g5 == g6);  // differ only in g
  EXPECT_TRUE(g5 < g6);
  EXPECT_FALSE(g6 < g5);
  EXPECT_FALSE(g5 < g5);
  EXPECT_EQ(g5.group_size(), 5);
  EXPECT_EQ(e.group_size(), 1);
  EXPECT_EQ(l.group_size(), 1);
  EXPECT_DOUBLE_EQ(g5.sampling_rate, 0.1);
  EXPECT_DOUBLE_EQ(e.sampling_rate, 1.0);
  EXPECT_EQ(g5.with_noise_multiplier(3.0), Mechanism::group_wor(100, 10, 5, 3.0));
}

TEST(Mechanism, GroupWorIsTheHypergeometricBoundWithGroupSizeG) {
  // Daigavane et al., Theorem 1 for a bound g on a unit's occurrences: exactly rdp_dpgnn.
  const std::vector<double> orders = {1.5, 2.0, 8.0, 64.0};
  const Mechanism m = Mechanism::group_wor(5000, 250, 12, 3.0);
  const std::vector<double> got = rdp_per_step(m, orders);
  EXPECT_EQ(got, rdp_dpgnn(5000, 250, 12, 3.0, orders));
  // kDpGnn with N(K, r) = 1 + 2 + 4 = 7 is groupwor with g = 7, bit for bit.
  EXPECT_EQ(rdp_per_step(Mechanism::group_wor(1000, 50, 7, 1.3), orders),
            rdp_per_step(Mechanism::dpgnn(1000, 50, 2, 2, 1.3), orders));
  // g = 1 and m = n (everything sampled, rho = 1 surely): the plain Gaussian alpha / (2 z^2).
  for (double z : {0.7, 2.0, 40.0}) {
    const std::vector<double> plain = rdp_per_step(Mechanism::group_wor(300, 300, 1, z), orders);
    for (std::size_t i = 0; i < orders.size(); ++i)
      EXPECT_NEAR(plain[i], orders[i] / (2 * z * z), 1e-13 * orders[i] / (2 * z * z));
  }
}

TEST(Mechanism, DispatchReachesTheExponentialAndLaplaceBounds) {
  const std::vector<double> orders = {2.0, 16.0};
  EXPECT_EQ(rdp_per_step(Mechanism::exponential(3.0), orders), rdp_exponential(3.0, orders));
  EXPECT_EQ(rdp_per_step(Mechanism::laplace(3.0), orders), rdp_laplace(3.0, orders));
  // A mechanism assembled field by field is re-validated by the dispatch.
  Mechanism bad;
  bad.scheme = Scheme::kGroupWor;
  bad.noise_multiplier = 1.0;
  bad.dataset_size = 10;
  bad.batch_size = 5;
  bad.group_bound = 11;  // > n
  EXPECT_THROW(rdp_per_step(bad, orders), std::invalid_argument);
}

TEST(Mechanism, NonsenseParametersAreRejectedWithTheParameterNamed) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message([] { Mechanism::poisson(0.0, 1.0); }).find("sampling_rate"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::poisson(1.01, 1.0); }).find("(0, 1]"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::wor(10, 11, 1.0); }).find("batch_size"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::wor(10, 0, 1.0); }).find("batch_size"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::wor(0, 0, 1.0); }).find("dataset_size"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::wor(10, 2, 0.0); }).find("noise_multiplier"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::wor(10, 2, -2.0); }).find("noise_multiplier"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::gaussian(NAN); }).find("noise_multiplier"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::dpgnn(50, 5, 7, 2, 1.0); }).find("N(K, r)"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::group_wor(50, 5, 51, 1.0); }).find("group_bound"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::group_wor(50, 5, 0, 1.0); }).find("group_bound"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::group_wor(50, 51, 1, 1.0); }).find("batch_size"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::group_wor(0, 0, 1, 1.0); }).find("dataset_size"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::group_wor(50, 5, 5, 0.0); }).find("noise_multiplier"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::exponential(0.0); }).find("noise_multiplier"), std::string::npos);
  EXPECT_NE(message([] { Mechanism::laplace(INFINITY); }).find("noise_multiplier"), std::string::npos);
  EXPECT_THROW(parse_scheme("gumbel"), std::invalid_argument);
}

TEST(NoiseConvention, SigmaIsNoiseMultiplierTimesTheSchemeSensitivity) {
  EXPECT_DOUBLE_EQ(noise_std(Scheme::kWor, 0.5, 1.2), 1.2 * 2 * 0.5);       // replace-one: 2C
  EXPECT_DOUBLE_EQ(noise_std(Scheme::kPoisson, 0.5, 1.2), 1.2 * 0.5);       // add/remove: C
  EXPECT_DOUBLE_EQ(noise_std(Scheme::kGaussian, 0.5, 1.2), 1.2 * 0.5);
  EXPECT_DOUBLE_EQ(noise_std(Scheme::kDpGnn, 0.5, 1.2, 57), 1.2 * 2 * 0.5 * 57);  // 2C N(K,r)
  EXPECT_DOUBLE_EQ(noise_std(Mechanism::dpgnn(90941, 100, 7, 2, 1.2), 0.5), 1.2 * 2 * 0.5 * 57);
  EXPECT_DOUBLE_EQ(noise_multiplier_from_std(Scheme::kWor, 0.5, 1.2), 1.2);
  EXPECT_THROW(noise_std(Scheme::kWor, 0.0, 1.0), std::invalid_argument);
  EXPECT_THROW(noise_std(Scheme::kWor, 1.0, -1.0), std::invalid_argument);
  EXPECT_THROW(noise_std(Scheme::kDpGnn, 1.0, 1.0, 0), std::invalid_argument);
  // Exponential: clip = the utility sensitivity Delta, Gumbel scale beta = z Delta.
  EXPECT_DOUBLE_EQ(sensitivity(Scheme::kExponential, 0.25), 0.25);
  EXPECT_DOUBLE_EQ(noise_std(Scheme::kExponential, 0.25, 8.0), 8.0 * 0.25);
  EXPECT_DOUBLE_EQ(noise_std(Mechanism::exponential(8.0), 0.25), 8.0 * 0.25);
  // Laplace: Delta, scale b = z Delta.
  EXPECT_DOUBLE_EQ(sensitivity(Scheme::kLaplace, 0.25), 0.25);
  EXPECT_DOUBLE_EQ(noise_std(Mechanism::laplace(3.0), 0.25), 3.0 * 0.25);
  // Group WOR: 2C g.
  EXPECT_DOUBLE_EQ(noise_std(Scheme::kGroupWor, 0.5, 1.2, 9), 1.2 * 2 * 0.5 * 9);
  EXPECT_DOUBLE_EQ(noise_std(Mechanism::group_wor(1000, 10, 9, 1.2), 0.5), 1.2 * 2 * 0.5 * 9);
  EXPECT_DOUBLE_EQ(noise_multiplier_from_std(Scheme::kGroupWor, 0.5, 10.8, 9), 1.2);
  EXPECT_THROW(noise_std(Scheme::kGroupWor, 1.0, 1.0, 0), std::invalid_argument);
  EXPECT_THROW(noise_std(Scheme::kExponential, 0.0, 1.0), std::invalid_argument);
}

TEST(Orders, DefaultSetIsTheReferenceSetOf156Orders) {
  const std::vector<double> o = default_orders();
  ASSERT_EQ(o.size(), 156u);
  EXPECT_DOUBLE_EQ(o.front(), 1.1);
  EXPECT_DOUBLE_EQ(o[98], 10.9);
  EXPECT_DOUBLE_EQ(o[99], 11.0);
  EXPECT_DOUBLE_EQ(o[151], 63.0);
  EXPECT_DOUBLE_EQ(o.back(), 1024.0);
  EXPECT_EQ(parse_orders("8, 2,2.5,8"), (std::vector<double>{2.0, 2.5, 8.0}));
  EXPECT_THROW(parse_orders("2,x"), std::invalid_argument);
  EXPECT_THROW(parse_orders("1,2"), std::invalid_argument);
  EXPECT_THROW(parse_orders(""), std::invalid_argument);
  EXPECT_THROW(parse_orders("2,2e6"), std::invalid_argument);  // beyond kMaxOrder
}

}  // namespace
}  // namespace dpgnn::privacy
