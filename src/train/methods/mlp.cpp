// MLP baselines: every training node alone is one example (the `node` sampler), the model
// is an MLP whatever model.arch says. DP-MLP: replace-one subsampled Gaussian without
// replacement over the training nodes (DESIGN.md 3); MLP: no noise, no accountant.
#include "method.h"

namespace dpgnn::train::methods {
namespace {

class Mlp : public MethodSpec {
 public:
  sampling::SamplerOptions sampler_options(const Config& c) const override { return single_node_sampler(c); }
  model::Arch arch(const Config&) const override { return model::Arch::kMlp; }
};

}  // namespace

namespace detail {
const MethodSpec& dp_mlp_spec() {
  static const Mlp s;
  return s;
}
const MethodSpec& mlp_spec() {
  static const Mlp s;
  return s;
}
}  // namespace detail

}  // namespace dpgnn::train::methods
