// Defaults of the method seam and the registry (method.h).
#include "method.h"

#include <algorithm>

#include "dpgnn/util/error.h"

namespace dpgnn::train::methods {

sampling::SamplerOptions MethodSpec::part_sampler_options(const Config& c, int,
                                                          const std::vector<std::int64_t>&) const {
  return sampler_options(c);
}

namespace {
// The default automatic batch: min(256, M / 2), at least 1.
std::int64_t half_up_to_256(std::int64_t realised) {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(256, realised / 2));
}
}  // namespace

std::int64_t MethodSpec::auto_batch_size(std::int64_t realised) const { return half_up_to_256(realised); }

std::int64_t full_batch_while_small(std::int64_t realised) {
  return realised <= kFullBatchLimit ? std::max<std::int64_t>(1, realised) : half_up_to_256(realised);
}

std::optional<std::string> MethodSpec::refuse_partition(const Config&, const std::string&) const {
  return std::nullopt;
}

std::int64_t MethodSpec::population(const Config&, std::int64_t realised, std::int64_t) const { return realised; }

std::optional<std::string> MethodSpec::check_privacy(const Config&, std::int64_t) const { return std::nullopt; }

privacy::Mechanism MethodSpec::mechanism(const Config& c, std::int64_t realised, std::int64_t total_train,
                                         std::int64_t m, double z, std::int64_t) const {
  return privacy::Mechanism::wor(population(c, realised, total_train), m, z);
}

std::uint64_t MethodSpec::epoch_of_step(const Config&, std::int64_t) const { return 0; }

std::vector<privacy::AccountantEvent> MethodSpec::pre_release_events(const Config&, double) const { return {}; }

double MethodSpec::pre_release_fraction(const Config&) const { return 0.0; }

PreRelease MethodSpec::pre_release(const Config&, const partition::PartitionFile&, const partition::Shard&,
                                   dist::Communicator&, const Secret&, double) const {
  throw Error("method has no pre-training release", kExitInternal);
}

std::optional<std::string> refuse_metis_for_node_level_dp(const Config& c, const std::string& partition_method) {
  if (partition_method != "metis") return std::nullopt;
  return c.source + ": method " + c.method +
         " gives node-level DP, where the graph structure is private; a METIS partition depends on it (DESIGN.md "
         "5). Use `dpgnn partition --method random`.";
}

sampling::SamplerOptions single_node_sampler(const Config& c) {
  sampling::SamplerOptions o;
  o.kind = sampling::SamplerKind::node;
  o.walk_length = c.sampler.walk_length;
  o.edges = sampling::parse_edge_mode(c.sampler.edges);
  return o;
}

const MethodSpec& method_spec(Method m) {
  switch (m) {
    case Method::kDrw: return detail::drw_spec();
    case Method::kDrwR: return detail::drw_r_spec();
    case Method::kDrwD: return detail::drw_d_spec();
    case Method::kGcn: return detail::gcn_spec();
    case Method::kDpGnn: return detail::dpgnn_spec();
    case Method::kDpMlp: return detail::dp_mlp_spec();
    case Method::kMlp: return detail::mlp_spec();
    case Method::kSplit: return detail::split_spec();
    case Method::kDpar: return detail::dpar_spec();
  }
  return detail::drw_spec();  // unreachable: every enumerator is listed above
}

model::ModelConfig model_config(const Config& c, const graph::DatasetMeta& meta) {
  model::ModelConfig mc;
  mc.arch = method_spec(c.method_enum()).arch(c);
  mc.layers = c.model.layers;
  mc.hidden = c.model.hidden;
  mc.in_features = static_cast<int>(meta.num_features);
  mc.num_classes = static_cast<int>(meta.num_classes);
  mc.activation = model::parse_activation(c.model.activation);
  mc.dropout = c.model.dropout;
  mc.multilabel = meta.multilabel;
  mc.validate();
  return mc;
}

}  // namespace dpgnn::train::methods
