// MLP baselines: every training node alone is one example (the `node` sampler), the model
// is an MLP whatever model.arch says. DP-MLP: replace-one subsampled Gaussian without
// replacement over the training nodes (DESIGN.md 3); MLP: no noise, no accountant.
#include "method.h"

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
