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
  std::string name() const override { return "dpgnn"; }
  std::string accountant(const Config&) const override { return "dpgnn_hypergeometric"; }
  std::string pairing(const Config& c) const override {
    return "sampler in-degree-bounded neighbourhoods (K " + std::to_string(c.sampler.max_degree) + ", r " +
           std::to_string(c.model.layers) + "), accountant " + accountant(c) + " (sensitivity 2C N(K, r))";
  }
  // sampler.degree_bound: paper samples each in-edge of u with probability K/(2|RE_u|), which
  // depends on u's other in-neighbours: removing a node changes subgraphs that do not contain
  // it, and Lemma 2 (hence the reported epsilon) does not cover that step (docs/privacy.md,
  // "DP-GNN degree bounding"); `require` is covered.
  std::optional<std::string> outside_guarantee(const Config& c) const override {
    if (c.sampler.degree_bound != "paper") return std::nullopt;
    return "sampler.degree_bound: paper is outside Lemma 2 of Daigavane et al. (removing a node changes subgraphs "
           "that do not contain it; docs/privacy.md); sampler.degree_bound: require is covered";
  }
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
