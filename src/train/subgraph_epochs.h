// The training examples of a run: every owned part's disjoint subgraphs, agreed on as global
// ids, the batch size m, and the re-sampling of DRW-D (a new set every resample_every steps,
// the "epoch" of a step). A pre-training release may drop examples (DPAR folds nodes into
// other examples) or keep only a hidden sample of them; the set is then sampled again.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "batch_builder.h"
#include "dpgnn/sampling/global_ids.h"
#include "dpgnn/train/config.h"

namespace dpgnn::dist {
class Communicator;
}
namespace dpgnn::partition {
class PartitionFile;
}

namespace dpgnn::train {
namespace methods {
class MethodSpec;
struct PreRelease;
}  // namespace methods

struct Sampled {
  std::vector<PartSamples> parts;
  sampling::GlobalIds ids{std::vector<std::int64_t>{0}};
};

// Collective. Samples every owned part for `epoch`, verifies the invariants (disjointness,
// DESIGN.md 4) and agrees on the global ids. `removed`: roots (global ids, sorted) whose
// subgraphs are dropped; `in_sample`: when set, only roots whose training-node index it
// accepts are kept.
Sampled sample_all(const Config& cfg, const partition::Shard& shard, dist::Communicator& comm, std::uint64_t epoch,
                   const std::vector<std::int64_t>& part_train_nodes, const std::vector<std::int64_t>& removed = {},
                   const std::function<bool(std::int64_t)>& in_sample = {});

class SubgraphEpochs {
 public:
  // Collective: samples epoch 0 and sizes the batch (refusals as CollectiveError).
  SubgraphEpochs(const Config& cfg, const methods::MethodSpec& spec, const partition::Shard& shard,
                 const partition::PartitionFile& pf, dist::Communicator& comm);

  // Collective: applies a release's removals and sample, sampling the epoch again and sizing an
  // automatic batch again.
  void restrict_to(const methods::PreRelease& release);
  // Collective: the set of the epoch holding `step` (DRW-D); true when it was sampled anew.
  bool advance_to(std::int64_t step);

  const Sampled& sampled() const { return sampled_; }
  std::int64_t M() const { return sampled_.ids.total(); }
  std::int64_t m() const { return m_; }
  std::int64_t total_train() const { return total_train_; }
  // The population the accountant samples from (M_min with worst_case).
  std::int64_t population() const;
  double sample_seconds() const { return sample_seconds_; }

 private:
  void resample();
  void check_batch(const std::string& when) const;

  const Config& cfg_;
  const methods::MethodSpec& spec_;
  const partition::Shard& shard_;
  const partition::PartitionFile& pf_;
  dist::Communicator& comm_;
  std::uint64_t epoch_ = 0;
  Sampled sampled_;
  std::int64_t m_ = 0;
  std::int64_t total_train_ = 0;
  bool full_auto_batch_ = false;
  std::vector<std::int64_t> removed_;
  std::function<bool(std::int64_t)> in_sample_;
  double sample_seconds_ = 0.0;
};

}  // namespace dpgnn::train
