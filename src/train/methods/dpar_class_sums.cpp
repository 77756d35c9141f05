// DPAR's class sums (see dpar_class_sums.h).
#include "dpar_class_sums.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "dpar_labels.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/noise/discrete_gaussian.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/util/error.h"

namespace dpgnn::train::methods {

bool class_sums_chosen(const Config& c, const graph::DatasetMeta& meta, std::int64_t total_train) {
  const auto& d = c.dpar;
  if (d.learner == "class_sums") return true;
  if (d.learner != "auto") return false;
  if (meta.multilabel || meta.num_classes < 3 || d.appr_nodes > 0 || label_release_on(c) ||
      c.privacy.noise_multiplier || c.model.layers != 1 || c.model.bias)
    return false;
  return static_cast<double>(total_train) * c.privacy.target_epsilon < d.class_sums_below;
}

std::vector<double> local_class_sums(const partition::Shard& shard) {
  const std::int64_t C = shard.meta.num_classes, F = shard.meta.num_features;
  if (shard.meta.multilabel) throw Error("local_class_sums: multi-label data (config.cpp refuses it)", kExitInternal);
  if (static_cast<std::int64_t>(shard.features.size()) != shard.num_local() * F)
    throw Error("local_class_sums: the shard's features are not loaded", kExitInternal);
  std::vector<double> sums(static_cast<std::size_t>(C * F), 0.0);
  std::vector<double> row(static_cast<std::size_t>(F));
  for (std::int64_t i = 0; i < shard.num_local(); ++i) {
    if (!shard.train_mask[i]) continue;
    const std::int64_t y = shard.labels[i];
    if (y < 0 || y >= C)
      throw DataError(shard.file + ": label of node " + std::to_string(shard.new_to_old[i]) + " is " +
                      std::to_string(y) + ", outside [0, " + std::to_string(C) + ")");
    const float* x = shard.features.data() + i * F;
    double norm2 = 0.0;
    for (std::int64_t f = 0; f < F; ++f) {
      // Only the non-negative part: the sensitivity argument needs <v, v'> >= 0 (header).
      row[f] = x[f] > 0.0f ? static_cast<double>(x[f]) : 0.0;
      norm2 += row[f] * row[f];
    }
    if (!std::isfinite(norm2))
      throw DataError(shard.file + ": the features of node " + std::to_string(shard.new_to_old[i]) +
                      " are not finite");
    const double scale = norm2 > 1.0 ? 1.0 / std::sqrt(norm2) : 1.0;  // clip to l2 norm 1
    double* s = sums.data() + y * F;
    for (std::int64_t f = 0; f < F; ++f) s[f] += row[f] * scale;
  }
  return sums;
}

ClassSums release_class_sums(const partition::Shard& shard, dist::Communicator& comm, const Secret& key, double z,
                             std::int64_t total_train) {
  ClassSums r;
  r.classes = shard.meta.num_classes;
  r.features = shard.meta.num_features;
  r.training_nodes = total_train;
  const std::int64_t P = r.classes * r.features;
  // sigma = z sqrt(2) for the sensitivity sqrt(2) of the header; one changed rank.
  const noise::NoiseGrid grid = noise::make_noise_grid(z * std::sqrt(2.0), std::sqrt(2.0), P);
  noise::check_exact_grid_sum(grid, 1.0, total_train);  // each node moves a coordinate by <= 1
  r.gamma = grid.gamma;
  std::vector<double> k = local_class_sums(shard);
  for (double& v : k) v = std::round(v / grid.gamma);  // this rank's k_r
  if (comm.rank() == 0)
    noise::add_discrete_gaussian_noise(k.data(), k.size(), grid.variance, derive_secret(key, 6, "dparclss"), 0);
  comm.allreduce_sum(k.data(), k.size());  // integers below 2^53: exact in any order
  r.values.assign(k.size(), 0);
  for (std::size_t i = 0; i < k.size(); ++i) r.values[i] = static_cast<std::int64_t>(k[i]);
  return r;
}

std::vector<float> class_sum_weights(const ClassSums& r) {
  const std::int64_t C = r.classes, F = r.features;
  const double U = static_cast<double>(std::max<std::int64_t>(1, r.training_nodes));
  std::vector<double> S(r.values.size());
  for (std::size_t i = 0; i < S.size(); ++i) S[i] = static_cast<double>(r.values[i]) * r.gamma;
  std::vector<double> u(static_cast<std::size_t>(F), 0.0);  // m = sum_c S[c], then m / ||m||
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t f = 0; f < F; ++f) u[f] += S[c * F + f];
  double norm2 = 0.0;
  for (double v : u) norm2 += v * v;
  if (norm2 > 0)
    for (double& v : u) v /= std::sqrt(norm2);
  std::vector<float> w(static_cast<std::size_t>(C * F));
  for (std::int64_t c = 0; c < C; ++c) {
    double along = 0.0;  // S[c] . u
    for (std::int64_t f = 0; f < F; ++f) along += S[c * F + f] * u[f];
    for (std::int64_t f = 0; f < F; ++f) w[c * F + f] = static_cast<float>((S[c * F + f] - along * u[f]) / U);
  }
  return w;
}

std::string serialise_class_sums(const ClassSums& r) {
  // nlohmann writes doubles with the shortest text that reads back to the same bits.
  return nlohmann::json{{"release", kClassSumsReleaseName},
                        {"classes", r.classes},
                        {"features", r.features},
                        {"training_nodes", r.training_nodes},
                        {"gamma", r.gamma},
                        {"values", r.values}}
             .dump() +
         "\n";
}

ClassSums parse_class_sums(const std::string& bytes, const std::string& where) {
  ClassSums r;
  try {
    const auto j = nlohmann::json::parse(bytes);
    r.classes = j.at("classes").get<std::int64_t>();
    r.features = j.at("features").get<std::int64_t>();
    r.training_nodes = j.at("training_nodes").get<std::int64_t>();
    r.gamma = j.at("gamma").get<double>();
    r.values = j.at("values").get<std::vector<std::int64_t>>();
    if (r.classes < 1 || r.features < 1) throw std::invalid_argument("classes and features must be >= 1");
    if (r.training_nodes < 0) throw std::invalid_argument("training_nodes must be >= 0");
    if (!(r.gamma > 0) || !std::isfinite(r.gamma)) throw std::invalid_argument("gamma must be > 0");
    if (static_cast<std::int64_t>(r.values.size()) != r.classes * r.features)
      throw std::invalid_argument("values has " + std::to_string(r.values.size()) + " entries, not classes x features");
  } catch (const std::exception& e) {
    throw DataError(where + ": malformed stored class sums: " + e.what());
  }
  return r;
}

}  // namespace dpgnn::train::methods
