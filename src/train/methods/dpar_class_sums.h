// DPAR's class sums (dpgnn's addition to Zhang et al.; docs/privacy.md "DPAR's class sums"):
// instead of DP-SGD, the linear model f_theta(x) = W x is learnt by ONE Gaussian release of the
// per-class sums of each training node's row r_i = [a clip(x_i+), b]:
//   S[c] = sum over training nodes i with label c of r_i,
// where x_i+ is the non-negative part of the node's (l2-normalised) features, clip scales it to
// l2 norm at most 1, and the last column (b = kCountWeight, a = sqrt(1 - b^2)) counts the class's
// nodes. From the release: the class sums s_c = S[c][0..F) / a, the counts n_c = S[c][F] / b,
// their overall mean m = sum_c s_c / U (U training nodes, public), and the weights
//   W[c] = (s_c - n_c m) / U,
// each class's sum less its share of the overall mean: a nearest-class-mean classifier whose
// common direction (every class's mean shares the features' mean) is removed, so that the class
// sizes do not weigh that common part into every node's scores (Amazon Photo at epsilon 1: 0.54
// with the plain sums, 0.73 without the common part; Cora 0.68 and 0.69; docs/results.md,
// "Issue 37: the class sums"). The division by U is a public scale: argmax and the centred
// propagation do not depend on it. With every node in one noisy sum, none of DP-SGD's noise
// accumulates over steps, and at small budgets on small graphs that wins.
//
// Privacy. Replace-one node-level (DESIGN.md 2): one node's (features, label) becomes another's.
// Its contribution to S is the matrix v = e_y r^T, of Frobenius norm <= a^2 + b^2 = 1 with
// non-negative entries, so two contributions v, v' have <v, v'> >= 0 and
// ||v - v'||^2 = ||v||^2 + ||v'||^2 - 2 <v, v'> <= 2: the l2 sensitivity of S is sqrt(2) (the
// argument of DP-APPR's gm release, Zhang et al. Appendix B; non-negativity is why only x+ is
// summed: with signed features the bound would be 2). The release is the Gaussian mechanism
// with sigma = z sqrt(2): one `gaussian z` event; the weights are its post-processing. It is
// drawn as DP-SGD's noise is (noise/discrete_gaussian.h): every rank rounds its partial sum to
// the grid of make_noise_grid(z sqrt(2), sqrt(2), C (F + 1)), rank 0 adds the exact discrete
// Gaussian of that grid, from a key derived from the batch secret, and one all-reduce sums
// integers exactly.
// So a crash between the ledger record and the stored file recomputes the same bytes
// (privacy_plan.cpp), and the release is a pure function of (data, partition, secret).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "method.h"

namespace dpgnn::dist {
class Communicator;
}
namespace dpgnn::partition {
struct Shard;
}

namespace dpgnn::train::methods {

// The release's name in the ledger and its stored file (releases/class-sums.json).
inline constexpr const char* kClassSumsReleaseName = "class-sums";

// b, the weight of the count column: its noise on a count is sigma / b (at epsilon 1, about 21
// nodes), and the features keep a = sqrt(1 - b^2) = 0.968 of their scale. Chosen offline on Cora,
// Amazon Photo and Facebook at epsilon 1 (b = 0.1, 0.25, 0.5; docs/results.md).
inline constexpr double kCountWeight = 0.25;

// The released class sums on the noise grid: S = gamma * values, row-major [classes, features + 1]
// (the last column the scaled counts).
struct ClassSums {
  std::int64_t classes = 0;
  std::int64_t features = 0;
  std::int64_t training_nodes = 0;  // U (public: the training mask)
  double count_weight = kCountWeight;  // b
  double gamma = 0.0;               // the grid width
  std::vector<std::int64_t> values; // [classes * (features + 1)] grid integers, noise included
};

// Whether `c` learns f_theta by the class sums on this data (dpar.learner class_sums, or auto and
// the rule of DparSection::learner holds for `total_train` training nodes). Public: it reads the
// config, the dataset's class count and the training mask's size only.
bool class_sums_chosen(const Config& c, const graph::DatasetMeta& meta, std::int64_t total_train);

// This rank's partial sums over the training nodes it owns, before rounding (row-major
// [classes, features + 1]): the rows r_i above. For tests.
std::vector<double> local_class_sums(const partition::Shard& shard);

// Collective: the release at noise multiplier z (sigma = z sqrt(2)); the same on every rank.
// `key`: the batch secret (the noise key is derived from it). `total_train`: U.
ClassSums release_class_sums(const partition::Shard& shard, dist::Communicator& comm, const Secret& key, double z,
                             std::int64_t total_train);

// The linear model's weights [classes * features] (row-major, as layers.0.weight):
// W[c] = (s_c - n_c m) / U, above.
std::vector<float> class_sum_weights(const ClassSums& r);

// The stored form (JSON, one line) and back; parse_class_sums throws DataError naming `where`.
std::string serialise_class_sums(const ClassSums& r);
ClassSums parse_class_sums(const std::string& bytes, const std::string& where);

}  // namespace dpgnn::train::methods
