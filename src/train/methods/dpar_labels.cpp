// DPAR's label release by k-ary randomized response (see dpar_labels.h).
#include "dpar_labels.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "dpgnn/dist/communicator.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/util/error.h"

namespace dpgnn::train::methods {
namespace {
constexpr double kTwo53 = 9007199254740992.0;  // 2^53
}

bool label_release_on(const Config& c) {
  return c.dpar.label_fraction > 0 && c.dpar.label_fraction * c.privacy.target_epsilon >= c.dpar.label_min_epsilon;
}

std::uint64_t rr_keep_threshold(std::int64_t categories, double z) {
  if (categories < 2 || !(z > 0) || !std::isfinite(z))
    throw Error("rr_keep_threshold: needs categories >= 2 and z > 0", kExitInternal);
  // p = 1 / (1 + (k - 1) e^{-eps}), in long double, then rounded down to the 53-bit grid.
  const long double p = 1.0L / (1.0L + static_cast<long double>(categories - 1) * std::exp(-1.0L / z));
  return static_cast<std::uint64_t>(std::floor(p * static_cast<long double>(kTwo53)));
}

double rr_keep_probability(std::int64_t categories, double z) {
  return static_cast<double>(rr_keep_threshold(categories, z)) / kTwo53;
}

std::int64_t respond(const Secret& key, std::int64_t node, std::int64_t label, std::int64_t categories, double z) {
  SecureStream s(key, StreamPurpose::label_response, 0, static_cast<std::uint64_t>(node));
  if (s.bits(53) < rr_keep_threshold(categories, z)) return label;
  // One of the k - 1 other values, uniformly (an exact draw below k - 1).
  const auto other = static_cast<std::int64_t>(s.below(static_cast<std::uint64_t>(categories - 1)));
  return other < label ? other : other + 1;
}

ReleasedLabels release_labels(const partition::Shard& shard, dist::Communicator& comm, const Secret& key, double z) {
  const std::int64_t categories = shard.meta.num_classes;
  const Secret label_key = derive_secret(key, 5, "dparlbls");
  std::vector<std::int64_t> mine;  // (dataset id, released label) pairs
  for (std::int64_t i = 0; i < shard.num_local(); ++i) {
    if (!shard.train_mask[i]) continue;
    const std::int64_t y = shard.labels[i];
    if (y < 0 || y >= categories)
      throw DataError("label of node " + std::to_string(shard.new_to_old[i]) + " is " + std::to_string(y) +
                      ", outside [0, " + std::to_string(categories) + ")");
    mine.push_back(shard.new_to_old[i]);
    mine.push_back(respond(label_key, shard.new_to_old[i], y, categories, z));
  }
  std::vector<std::int64_t> counts(static_cast<std::size_t>(comm.size()));
  const auto n_mine = static_cast<std::int64_t>(mine.size());
  comm.allgather(&n_mine, counts.data(), 1);
  std::vector<std::size_t> recv_counts(counts.begin(), counts.end());
  std::vector<std::int64_t> all(std::accumulate(recv_counts.begin(), recv_counts.end(), std::size_t{0}) + 1);
  mine.push_back(0);  // never a null buffer
  comm.allgatherv(mine.data(), static_cast<std::size_t>(n_mine), all.data(), recv_counts);
  all.pop_back();
  std::vector<std::size_t> order(all.size() / 2);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return all[2 * a] < all[2 * b]; });
  ReleasedLabels r;
  r.categories = categories;
  r.keep_probability = rr_keep_probability(categories, z);
  for (std::size_t i : order) {
    r.nodes.push_back(all[2 * i]);
    r.labels.push_back(all[2 * i + 1]);
  }
  return r;
}

std::string serialise_labels(const ReleasedLabels& r) {
  // nlohmann writes doubles with the shortest text that reads back to the same bits.
  return nlohmann::json{{"release", kLabelReleaseName},
                        {"categories", r.categories},
                        {"keep_probability", r.keep_probability},
                        {"nodes", r.nodes},
                        {"labels", r.labels}}
             .dump() +
         "\n";
}

ReleasedLabels parse_labels(const std::string& bytes, const std::string& where) {
  ReleasedLabels r;
  try {
    const auto j = nlohmann::json::parse(bytes);
    r.categories = j.at("categories").get<std::int64_t>();
    r.keep_probability = j.at("keep_probability").get<double>();
    r.nodes = j.at("nodes").get<std::vector<std::int64_t>>();
    r.labels = j.at("labels").get<std::vector<std::int64_t>>();
    if (r.categories < 2) throw std::invalid_argument("categories must be >= 2");
    if (!(r.keep_probability > 0 && r.keep_probability < 1)) throw std::invalid_argument("keep_probability must be in (0, 1)");
    if (r.nodes.size() != r.labels.size()) throw std::invalid_argument("nodes and labels differ in length");
    if (!std::is_sorted(r.nodes.begin(), r.nodes.end())) throw std::invalid_argument("nodes are not sorted");
    for (auto y : r.labels)
      if (y < 0 || y >= r.categories) throw std::invalid_argument("a label is outside [0, categories)");
  } catch (const std::exception& e) {
    throw DataError(where + ": malformed stored label release: " + e.what());
  }
  return r;
}

}  // namespace dpgnn::train::methods
