// Seeded random splits (see include/dpgnn/graph/import/split.h).
#include "dpgnn/graph/import/split.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "dpgnn/util/error.h"
#include "dpgnn/util/rng.h"

namespace dpgnn::graph::import {

namespace {

// Stream ids of the split's random numbers (util/rng.h: one stream per purpose).
constexpr std::uint64_t kSplitStream = 0x5350'4C49'5400ULL;  // "SPLIT"

// Fisher-Yates shuffle driven by a counter-based stream: the same on every platform.
void shuffle(std::vector<std::int64_t>& v, CounterRng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng.below(i));
    std::swap(v[i - 1], v[j]);
  }
}

void check_fractions(const SplitOptions& o) {
  const double tr = o.train_fraction < 0 ? 0.0 : o.train_fraction;
  const double va = o.val_fraction < 0 ? 0.0 : o.val_fraction;
  if (!(tr > 0.0 && tr <= 1.0))
    throw UsageError("--train-fraction must be in (0, 1], got " + std::to_string(o.train_fraction));
  if (va < 0.0 || tr + va > 1.0)
    throw UsageError("--val-fraction must be in [0, 1 - train fraction], got " + std::to_string(o.val_fraction));
}

SplitMasks fraction_split(std::vector<std::int64_t> nodes, std::size_t n, const SplitOptions& o) {
  check_fractions(o);
  CounterRng rng(o.seed, kSplitStream, 1);
  shuffle(nodes, rng);
  const double va_frac = o.val_fraction < 0 ? 0.0 : o.val_fraction;
  const auto n_train = static_cast<std::size_t>(std::floor(o.train_fraction * static_cast<double>(nodes.size())));
  const auto n_val = static_cast<std::size_t>(std::floor(va_frac * static_cast<double>(nodes.size())));
  SplitMasks m{std::vector<std::uint8_t>(n, 0), std::vector<std::uint8_t>(n, 0), std::vector<std::uint8_t>(n, 0)};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto& mask = i < n_train ? m.train : i < n_train + n_val ? m.val : m.test;
    mask[nodes[i]] = 1;
  }
  spdlog::info("random node-level split (seed {}): {} train, {} val, {} test of {} labelled nodes", o.seed,
               n_train, n_val, nodes.size() - n_train - n_val, nodes.size());
  return m;
}

}  // namespace

SplitMasks random_split(const std::vector<std::int64_t>& labels, std::int64_t num_classes,
                        const SplitOptions& o) {
  const std::size_t n = labels.size();
  if (o.use_fractions()) {
    std::vector<std::int64_t> labelled;
    for (std::size_t v = 0; v < n; ++v)
      if (labels[v] >= 0) labelled.push_back(static_cast<std::int64_t>(v));
    return fraction_split(std::move(labelled), n, o);
  }
  if (o.train_per_class < 1) throw UsageError("--train-per-class must be >= 1, got " + std::to_string(o.train_per_class));
  if (o.val_per_class < 0) throw UsageError("--val-per-class must be >= 0, got " + std::to_string(o.val_per_class));
  std::vector<std::vector<std::int64_t>> by_class(static_cast<std::size_t>(num_classes));
  for (std::size_t v = 0; v < n; ++v)
    if (labels[v] >= 0 && labels[v] < num_classes) by_class[labels[v]].push_back(static_cast<std::int64_t>(v));
  SplitMasks m{std::vector<std::uint8_t>(n, 0), std::vector<std::uint8_t>(n, 0), std::vector<std::uint8_t>(n, 0)};
  std::int64_t n_train = 0, n_val = 0, n_test = 0;
  for (std::int64_t c = 0; c < num_classes; ++c) {
    auto& nodes = by_class[c];
    // One stream per class: the split of a class does not depend on the other classes.
    CounterRng rng(o.seed, kSplitStream, 2 + static_cast<std::uint64_t>(c));
    shuffle(nodes, rng);
    const auto size = static_cast<std::int64_t>(nodes.size());
    if (size < o.train_per_class + o.val_per_class)
      spdlog::warn("class {} has only {} nodes, fewer than {} train + {} val per class: it gets {} train, {} val, 0 test",
                   c, size, o.train_per_class, o.val_per_class, std::min(size, o.train_per_class),
                   std::max<std::int64_t>(0, size - o.train_per_class));
    for (std::int64_t i = 0; i < size; ++i) {
      if (i < o.train_per_class) {
        m.train[nodes[i]] = 1;
        ++n_train;
      } else if (i < o.train_per_class + o.val_per_class) {
        m.val[nodes[i]] = 1;
        ++n_val;
      } else {
        m.test[nodes[i]] = 1;
        ++n_test;
      }
    }
  }
  spdlog::info("random per-class split (seed {}): {} train ({} per class), {} val ({} per class), {} test", o.seed,
               n_train, o.train_per_class, n_val, o.val_per_class, n_test);
  return m;
}

SplitMasks random_fraction_split(const std::vector<std::uint8_t>& labelled, const SplitOptions& o) {
  if (!o.use_fractions())
    throw UsageError(
        "this multi-label dataset defines no split and per-class counts are undefined for multi-label data: "
        "give --train-fraction and --val-fraction");
  std::vector<std::int64_t> nodes;
  for (std::size_t v = 0; v < labelled.size(); ++v)
    if (labelled[v]) nodes.push_back(static_cast<std::int64_t>(v));
  return fraction_split(std::move(nodes), labelled.size(), o);
}

}  // namespace dpgnn::graph::import
