#include "feature_norm.h"

#include <cmath>

#include "dpgnn/util/error.h"

namespace dpgnn::train {

void normalize_feature_rows(float* x, std::int64_t rows, std::int64_t F, const std::string& mode) {
  if (mode == "none") return;
  if (mode != "l2") throw Error("normalize_feature_rows: unknown mode '" + mode + "'", kExitInternal);
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = x + r * F;
    double sq = 0.0;
    for (std::int64_t f = 0; f < F; ++f) sq += static_cast<double>(row[f]) * row[f];
    if (sq <= 0.0) continue;
    const double inv = 1.0 / std::sqrt(sq);
    for (std::int64_t f = 0; f < F; ++f) row[f] = static_cast<float>(row[f] * inv);
  }
}

}  // namespace dpgnn::train
