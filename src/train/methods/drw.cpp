// The random-walk family (Ayle et al. 2022): DRW, DRW-R and DRW-D. One subgraph per
// disjoint random walk (Appendix B.1/B.2), feature-level DP with the structure public, so
// the subgraph set is a function of public data and the accountant is the replace-one
// subsampled Gaussian without replacement (DESIGN.md 3).
#include "method.h"

namespace dpgnn::train::methods {
namespace {

class DrwFamily : public MethodSpec {
 public:
  explicit DrwFamily(Method m) : method_(m) {}

  std::string name() const override {
    return method_ == Method::kDrwR ? "drw-r" : method_ == Method::kDrwD ? "drw-d" : "drw";
  }
  bool uses_random_walks() const override { return true; }
  std::string pairing(const Config& c) const override {
    const auto o = sampler_options(c);
    std::string s = method_ == Method::kDrwR ? "sampler disjoint random walks with restarts (L " +
                                                    std::to_string(o.walk_length) + ", R " + std::to_string(o.restarts)
                                             : "sampler disjoint random walks (L " + std::to_string(o.walk_length) + ", R 1";
    if (method_ == Method::kDrwD) s += ", re-sampled every " + std::to_string(c.sampler.resample_every) + " steps";
    return s + "), accountant " + accountant(c) + " (sensitivity 2C)";
  }
  // The Cora search of docs/results.md (a narrow tanh GCN, few steps, the parameter average,
  // which is post-processing).
  std::vector<std::pair<std::string, std::string>> defaults() const override {
    return {{"model.hidden", "64"}, {"model.activation", "tanh"}, {"train.max_steps", "200"}, {"train.ema", "0.95"},
            {"train.lr", "0.03"}};
  }

  sampling::SamplerOptions sampler_options(const Config& c) const override {
    sampling::SamplerOptions o;
    o.walk_length = c.sampler.walk_length;
    o.edges = sampling::parse_edge_mode(c.sampler.edges);
    if (method_ == Method::kDrwR) {
      o.kind = sampling::SamplerKind::drw_r;
      o.restarts = c.sampler.restarts;
    } else {
      o.kind = sampling::SamplerKind::drw;
      o.restarts = 1;
    }
    return o;
  }

  // DRW-D: when this is a full batch, the trainer keeps it full at every re-sampling.
  std::int64_t auto_batch_size(std::int64_t realised) const override { return full_batch_while_small(realised); }

  std::int64_t population(const Config& c, std::int64_t realised, std::int64_t total_train) const override {
    if (!c.privacy.worst_case) return realised;
    // Ayle et al. 2022, Sec. 4.2: M_min = ceil(N / (1 + R L)) (each subgraph holds at most
    // 1 + R L training nodes, and every training node is in one).
    const auto o = sampler_options(c);
    const std::int64_t cap = 1 + o.restarts * o.walk_length;
    return (total_train + cap - 1) / cap;
  }

  std::uint64_t epoch_of_step(const Config& c, std::int64_t t) const override {
    // DRW-D (Sec. 4.2): a new set of walks every sampler.resample_every steps.
    if (method_ != Method::kDrwD) return 0;
    return static_cast<std::uint64_t>(t / c.sampler.resample_every);
  }

 private:
  Method method_;
};

}  // namespace

namespace detail {
const MethodSpec& drw_spec() {
  static const DrwFamily s(Method::kDrw);
  return s;
}
const MethodSpec& drw_r_spec() {
  static const DrwFamily s(Method::kDrwR);
  return s;
}
const MethodSpec& drw_d_spec() {
  static const DrwFamily s(Method::kDrwD);
  return s;
}
}  // namespace detail

}  // namespace dpgnn::train::methods
