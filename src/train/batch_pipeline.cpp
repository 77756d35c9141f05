#include "batch_pipeline.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "dpgnn/partition/shard.h"
#include "dpgnn/sampling/batch.h"
#include "feature_store.h"
#include "step_loop.h"
#include "subgraph_epochs.h"

namespace dpgnn::train {

std::vector<Pick> picks_of_step(const StepContext& ctx, std::int64_t step) {
  const auto& ids = ctx.epochs.sampled().ids;
  const auto gids = sampling::sample_batch_without_replacement(ctx.secrets.batch, static_cast<std::uint64_t>(step),
                                                               ctx.epochs.M(), ctx.epochs.m());
  std::vector<Pick> picks;
  for (auto gid : gids) {
    const auto part = ids.owner(gid);
    if (part < ctx.shard.first_part || part >= ctx.shard.last_part) continue;
    picks.push_back({static_cast<std::size_t>(part - ctx.shard.first_part), ids.local_index(gid), gid});
  }
  return picks;
}

bool BatchPipeline::prefetch_enabled() {
  const char* v = std::getenv("DPGNN_BATCH_PREFETCH");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

BatchPipeline::BatchPipeline(const StepContext& ctx, bool background)
    : ctx_(ctx),
      background_(background),
      // Pinned buffers when the host gather feeds a GPU (feature_store.h).
      buffers_(3, ctx.state.net.device().is_cuda() && (ctx.features == nullptr || !ctx.features->on_device())) {}

BatchPipeline::~BatchPipeline() { settle(); }

BatchPipeline::StepBatch BatchPipeline::build(std::int64_t step) {
  StepBatch sb;
  sb.picks = picks_of_step(ctx_, step);
  if (!sb.picks.empty()) {
    sb.batch = build_batch(sb.picks, ctx_.epochs.sampled().parts, ctx_.shard, ctx_.state.net.device(),
                           &ctx_.release.example_features, &buffers_, ctx_.features);
  }
  return sb;
}

void BatchPipeline::settle() {
  if (worker_.joinable()) worker_.join();
}

void BatchPipeline::request(std::int64_t step) {
  if (!background_) return;
  settle();
  has_next_ = true;
  next_step_ = step;
  next_ = StepBatch{};
  next_error_ = nullptr;
  worker_ = std::thread([this, step] {
    try {
      next_ = build(step);
    } catch (...) {
      next_error_ = std::current_exception();
    }
  });
}

BatchPipeline::StepBatch BatchPipeline::take(std::int64_t step) {
  settle();
  const bool hit = has_next_ && next_step_ == step;
  has_next_ = false;
  if (hit) {
    if (next_error_) std::rethrow_exception(std::exchange(next_error_, nullptr));
    return std::exchange(next_, StepBatch{});
  }
  next_ = StepBatch{};  // a batch of another step: dropped
  next_error_ = nullptr;
  return build(step);
}

void BatchPipeline::drop() {
  settle();
  has_next_ = false;
  next_ = StepBatch{};
  next_error_ = nullptr;
}

}  // namespace dpgnn::train
