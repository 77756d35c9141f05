// Mechanism validation, the exact text round trip, and the single noise convention.
#include <gtest/gtest.h>

#include <cmath>

#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/privacy/noise_convention.h"
#include "dpgnn/privacy/orders.h"

namespace dpgnn::privacy {
namespace {

TEST(Mechanism, TextFormRoundTripsEveryDoubleExactly) {
  for (const Mechanism& m :
       {Mechanism::gaussian(0.1), Mechanism::wor(1000, 7, 1.0 / 3.0),
        Mechanism::poisson(std::nextafter(0.01, 1.0), std::nextafter(1.1, 2.0)),
        Mechanism::dpgnn(90941, 1000, 10, 2, 4.0 * std::atan(1.0))}) {
    const Mechanism back = Mechanism::parse(m.to_string());
    EXPECT_TRUE(back == m) << m.to_string();
    EXPECT_EQ(back.to_string(), m.to_string());
  }
  EXPECT_EQ(Mechanism::poisson(0.5, 2.0).to_string(), "poisson q=0.5 z=2");
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
  EXPECT_THROW(parse_scheme("laplace"), std::invalid_argument);
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
