// MLP baselines: every training node alone is one example (the `node` sampler), the model
// is an MLP whatever model.arch says. DP-MLP: replace-one subsampled Gaussian without
// replacement over the training nodes (DESIGN.md 3); MLP: no noise, no accountant.
#include "method.h"

#include <algorithm>

namespace dpgnn::train::methods {
namespace {

class Mlp : public MethodSpec {
 public:
  explicit Mlp(bool is_private) : private_(is_private) {}
  std::string name() const override { return private_ ? "dp-mlp" : "mlp"; }
  bool is_private() const override { return private_; }
  std::string pairing(const Config& c) const override {
    return private_ ? "sampler single nodes, accountant " + accountant(c) + " (sensitivity 2C)"
                    : "sampler single nodes, accountant none (non-private)";
  }
  sampling::SamplerOptions sampler_options(const Config& c) const override { return single_node_sampler(c); }
  model::Arch arch(const Config&) const override { return model::Arch::kMlp; }
  // DP-MLP, the baseline the graph methods must beat, at its best known setup rather than a
  // weak one: DPAR's learner without the graph (a linear model on l2-normalised features,
  // every training node in every step, 100 steps, lr 0.1). On Cora-ML 55/15/30 at epsilon 8
  // it reached 0.667 where the generic defaults (2 layers, batch 256, 1000 steps) gave 0.33
  // (docs/results.md, "Results matrix"). The non-private MLP keeps the generic defaults.
  std::vector<std::pair<std::string, std::string>> defaults() const override {
    if (!private_) return {};
    return {{"model.layers", "1"}, {"model.input_norm", "l2"}, {"train.max_steps", "100"}, {"train.lr", "0.1"}};
  }
  // Every training node (a full batch, q = 1): the step is one linear pass over the examples.
  std::int64_t auto_batch_size(std::int64_t realised) const override {
    return private_ ? std::max<std::int64_t>(1, realised) : MethodSpec::auto_batch_size(realised);
  }

 private:
  bool private_;
};

}  // namespace

namespace detail {
const MethodSpec& dp_mlp_spec() {
  static const Mlp s(true);
  return s;
}
const MethodSpec& mlp_spec() {
  static const Mlp s(false);
  return s;
}
}  // namespace detail

}  // namespace dpgnn::train::methods
