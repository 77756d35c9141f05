// DP-GNN (Daigavane et al.): node-level DP. In-degree-bounded r-hop neighbourhoods
// (Algorithms 1-3), every node in at most N(K, r) subgraphs (Lemma 1), hypergeometric-
// amplified RDP (Theorem 1). The structure is private, so a METIS partition is refused
// (DESIGN.md 5).
#include "method.h"

#include "dpgnn/privacy/noise_convention.h"

namespace dpgnn::train::methods {
namespace {

class DpGnn : public MethodSpec {
 public:
  sampling::SamplerOptions sampler_options(const Config& c) const override {
    sampling::SamplerOptions o;
    o.kind = sampling::SamplerKind::dpgnn;
    o.walk_length = c.sampler.walk_length;
    o.max_degree = c.sampler.max_degree;
    o.degree_bound = sampling::parse_degree_bound(c.sampler.degree_bound);
    o.layers = c.model.layers;
    o.edges = sampling::EdgeMode::walk;  // the sampled edge lists (Daigavane et al., Alg. 2)
    return o;
  }

  std::optional<std::string> refuse_partition(const Config& c, const std::string& partition_method) const override {
    return refuse_metis_for_node_level_dp(c, partition_method);
  }

  std::optional<std::string> check_privacy(const Config& c, std::int64_t realised) const override {
    const auto bound = privacy::neighbourhood_bound(c.sampler.max_degree, c.model.layers);
    if (bound <= realised) return std::nullopt;
    return "N(K, r) = " + std::to_string(bound) + " exceeds the number of training nodes " +
           std::to_string(realised) + ": lower sampler.max_degree";
  }

  privacy::Mechanism mechanism(const Config& c, std::int64_t realised, std::int64_t, std::int64_t m,
                               double z, std::int64_t) const override {
    return privacy::Mechanism::dpgnn(realised, m, c.sampler.max_degree, c.model.layers, z);
  }
};

}  // namespace

namespace detail {
const MethodSpec& dpgnn_spec() {
  static const DpGnn s;
  return s;
}
}  // namespace detail

}  // namespace dpgnn::train::methods
