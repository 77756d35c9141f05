// The next step's batch built while the current step computes (issue 38).
//
// Which subgraphs a step trains on is drawn from the secret batch stream by the step number
// alone (sampling/batch.h), and the subgraphs change only when DRW-D samples a new epoch, so
// step t + 1's batch (its picks, node rows, gathered features, labels and block structure) can
// be built on a background thread while step t's gradient is computed. It is the batch the step
// would build itself, bit for bit: the same function of the same inputs. A prefetched batch is
// used only for the step it was built for, and dropped when the subgraphs are sampled anew
// (the owner calls drop() when SubgraphEpochs::advance_to samples a new set). The background
// thread only reads the shard, the sampled subgraphs and the batch secret; the owner calls
// settle() before anything may change them. build_batch runs no parallel tensor kernel, so the
// thread does not start an OpenMP team of its own beside the step's.
//
// DPGNN_BATCH_PREFETCH=0 builds every batch in its step (the A/B switch of
// bench/cost_of_privacy.sh's PREFETCH; docs/cli.md).
#pragma once

#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "batch_builder.h"
#include "dpgnn/model/batch.h"

namespace dpgnn::train {

struct StepContext;

// Reusable host memory for the batches' feature matrices. A step's x is its largest tensor (a
// 30,000-node batch of Reddit's 602 features is 72 MB); memory of that size is mapped anew by
// the allocator on every step, and faulting its pages in cost more than gathering the rows on
// the 2-core VMs here (docs/benchmarks.md, "Where a step's time goes"). A buffer is handed out
// again only once no tensor refers to its memory any more (the step that used it is over), so
// reuse never overwrites a batch in use. Thread-safe.
class FeatureBuffers {
 public:
  // pinned: page-locked host memory (for a CUDA device: its copies to the device run
  // asynchronously); needs a LibTorch with CUDA.
  explicit FeatureBuffers(std::size_t max_buffers = 3, bool pinned = false) : max_(max_buffers), pinned_(pinned) {}
  // A contiguous [rows, cols] float32 CPU tensor in a free buffer, or in new memory when every
  // buffer is in use or too small (kept for later when fewer than max_buffers are held).
  at::Tensor take(std::int64_t rows, std::int64_t cols);

 private:
  std::mutex mu_;
  std::size_t max_;
  bool pinned_;
  std::vector<at::Tensor> pool_;  // 1-D float32
};

class FeatureStore;

// build_batch (batch_builder.h) gathering x on the device when `store` keeps the features there
// (feature_store.h), else on the host into `buffers` when it is not null. On the host it runs no
// parallel tensor kernel (host loops and copies only), so it can run on a thread of its own
// beside the step's OpenMP team.
model::Batch build_batch(const std::vector<Pick>& picks, const std::vector<PartSamples>& parts,
                         const partition::Shard& shard, c10::Device device,
                         const std::unordered_map<std::int64_t, std::vector<float>>* example_features,
                         FeatureBuffers* buffers, const FeatureStore* store);

// This rank's picks of a step's batch (the same global batch on every rank).
std::vector<Pick> picks_of_step(const StepContext& ctx, std::int64_t step);

class BatchPipeline {
 public:
  struct StepBatch {
    std::vector<Pick> picks;
    model::Batch batch;  // empty (no subgraph) when picks is empty
  };

  // background: prefetch on a thread (the default unless DPGNN_BATCH_PREFETCH=0).
  explicit BatchPipeline(const StepContext& ctx, bool background = prefetch_enabled());
  ~BatchPipeline();  // waits for a build in progress
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  // The batch of `step`: the prefetched one when it was built for this step (and not dropped),
  // else built now. Rethrows an exception of its background build.
  StepBatch take(std::int64_t step);
  // Starts building `step`'s batch in the background (nothing without background).
  void request(std::int64_t step);
  // Waits for a background build to finish (before the subgraphs may be sampled again).
  void settle();
  // Waits, then forgets the prefetched batch (the subgraphs were sampled anew).
  void drop();

  static bool prefetch_enabled();  // DPGNN_BATCH_PREFETCH unset or not "0"

 private:
  StepBatch build(std::int64_t step);

  const StepContext& ctx_;
  bool background_;
  FeatureBuffers buffers_;
  std::thread worker_;
  bool has_next_ = false;
  std::int64_t next_step_ = -1;
  StepBatch next_;
  std::exception_ptr next_error_;
};

}  // namespace dpgnn::train
