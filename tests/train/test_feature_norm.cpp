// model.input_norm: each row divided by its Euclidean norm (values checked by hand), zero
// rows untouched, "none" a no-op, an unknown mode an internal error; the config key accepts
// none and l2 and names itself otherwise.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../../src/train/feature_norm.h"
#include "dpgnn/train/config.h"

namespace dpgnn::train {
namespace {

TEST(FeatureNorm, DividesEachRowByItsEuclideanNorm) {
  std::vector<float> x = {3, 4, 0,   // norm 5
                          0, 0, 0,   // zero row: unchanged
                          1, 1, 1};  // norm sqrt(3)
  normalize_feature_rows(x.data(), 3, 3, "l2");
  EXPECT_FLOAT_EQ(x[0], 0.6f);
  EXPECT_FLOAT_EQ(x[1], 0.8f);
  EXPECT_FLOAT_EQ(x[2], 0.0f);
  for (int i = 3; i < 6; ++i) EXPECT_EQ(x[i], 0.0f);
  for (int i = 6; i < 9; ++i) EXPECT_FLOAT_EQ(x[i], static_cast<float>(1.0 / std::sqrt(3.0)));
}

TEST(FeatureNorm, NoneLeavesTheRowsAndAnUnknownModeThrows) {
  std::vector<float> x = {3, 4};
  normalize_feature_rows(x.data(), 1, 2, "none");
  EXPECT_EQ(x, (std::vector<float>{3, 4}));
  EXPECT_ANY_THROW(normalize_feature_rows(x.data(), 1, 2, "l1"));
}

TEST(FeatureNorm, TheConfigKeyAcceptsNoneAndL2) {
  EXPECT_EQ(parse_config("data: {dataset: d.h5}\nmodel: {input_norm: l2}\n", "t.yaml", {}).model.input_norm, "l2");
  EXPECT_EQ(parse_config("data: {dataset: d.h5}\n", "t.yaml", {}).model.input_norm, "none");
  try {
    parse_config("data: {dataset: d.h5}\nmodel: {input_norm: max}\n", "t.yaml", {});
    FAIL() << "input_norm: max was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("model.input_norm"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dpgnn::train
