// Seeded random train/val/test splits for datasets whose source defines none.
//
// Default: per class, `train_per_class` training and `val_per_class` validation nodes
// drawn at random, every other labelled node in test (20 / 30 / rest, the protocol of
// Shchur, Mumme, Bojchevski & Günnemann, "Pitfalls of Graph Neural Network Evaluation",
// 2018, Sec. 4). With fractions set, a node-level random split of the labelled nodes
// instead (needed for multi-label data, where "per class" is not defined). Unlabelled
// nodes (-1) are in no split. Deterministic for a seed: the permutation is drawn from the
// counter-based generator of util/rng.h, independent of platform and library versions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpgnn::graph::import {

struct SplitOptions {
  std::uint64_t seed = 0;
  std::int64_t train_per_class = 20;
  std::int64_t val_per_class = 30;
  double train_fraction = -1.0;  // >= 0: node-level fractions instead of per-class counts
  double val_fraction = -1.0;
  bool use_fractions() const { return train_fraction >= 0.0 || val_fraction >= 0.0; }
};

struct SplitMasks {
  std::vector<std::uint8_t> train, val, test;  // [N]
};

// Single-label split. `labels` [N] with -1 = unlabelled, ids in [0, num_classes).
// Logs the resulting sizes and warns about classes too small for the requested counts.
SplitMasks random_split(const std::vector<std::int64_t>& labels, std::int64_t num_classes,
                        const SplitOptions& options);

// Multi-label split (fractions only): `labelled` [N] says which nodes may be in a split.
SplitMasks random_fraction_split(const std::vector<std::uint8_t>& labelled, const SplitOptions& options);

}  // namespace dpgnn::graph::import
