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

std::optional<std::string> refuse_metis_for_node_level_dp(const Config& c, const std::string& partition_method) {
  // Fail closed: only the structure-independent assignments pass ("random", or "none": the
  // dataset itself as one part); METIS, PT-Scotch ("ptscotch") and any unknown method are refused.
  if (partition_method == "random" || partition_method == "none") return std::nullopt;
  return c.source + ": method " + c.method +
         " gives node-level DP, where the graph structure is private; a " +
         (partition_method == "metis" ? std::string("METIS") : "'" + partition_method + "'") +
         " partition depends on it (DESIGN.md 5). Use `dpgnn partition --method random`.";
}

sampling::SamplerOptions single_node_sampler(const Config& c) {
  sampling::SamplerOptions o;
  o.kind = sampling::SamplerKind::node;
  o.walk_length = c.sampler.walk_length;
  o.edges = sampling::parse_edge_mode(c.sampler.edges);
  return o;
}

std::string MethodSpec::accountant(const Config& c) const {
  return c.privacy.worst_case ? "wor_replace_one_worst_case" : "wor_replace_one";
}

namespace {
// The registry: each method's enumerator beside its spec, in the order --help lists them.
struct Registered {
  Method id;
  const MethodSpec* spec;
};
const std::vector<Registered>& registry() {
  static const std::vector<Registered> r = {
      {Method::kDrw, &detail::drw_spec()},     {Method::kDrwR, &detail::drw_r_spec()},
      {Method::kDrwD, &detail::drw_d_spec()},  {Method::kDpGnn, &detail::dpgnn_spec()},
      {Method::kDpMlp, &detail::dp_mlp_spec()}, {Method::kSplit, &detail::split_spec()},
      {Method::kDpar, &detail::dpar_spec()},   {Method::kGcn, &detail::gcn_spec()},
      {Method::kMlp, &detail::mlp_spec()}};
  return r;
}
}  // namespace

const std::vector<const MethodSpec*>& all_methods() {
  static const std::vector<const MethodSpec*> all = [] {
    std::vector<const MethodSpec*> v;
    for (const auto& r : registry()) v.push_back(r.spec);
    return v;
  }();
  return all;
}

const MethodSpec* find_method(const std::string& name) {
  for (const auto& r : registry())
    if (r.spec->name() == name) return r.spec;
  return nullptr;
}

const MethodSpec& method_spec(Method m) {
  for (const auto& r : registry())
    if (r.id == m) return *r.spec;
  throw Error("method_spec: an unregistered method", kExitInternal);
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
  mc.bias = c.model.bias;
  mc.multilabel = meta.multilabel;
  mc.validate();
  return mc;
}

}  // namespace dpgnn::train::methods

// The config-level view of the registry (config.h).
namespace dpgnn::train {

Method parse_method(const std::string& name) {
  for (const auto& r : methods::registry())
    if (r.spec->name() == name) return r.id;
  std::string known;
  for (const auto* m : methods::all_methods()) known += (known.empty() ? "" : ", ") + m->name();
  throw UsageError("method '" + name + "' is unknown: expected one of " + known);
}

std::string method_name(Method m) { return methods::method_spec(m).name(); }

std::vector<std::string> method_names() {
  std::vector<std::string> v;
  for (const auto* m : methods::all_methods()) v.push_back(m->name());
  return v;
}

bool is_private(Method m) { return methods::method_spec(m).is_private(); }
bool uses_random_walks(Method m) { return methods::method_spec(m).uses_random_walks(); }

std::string accountant_name(Method m, bool worst_case) {
  const auto& spec = methods::method_spec(m);
  if (!spec.is_private()) return "none";
  Config c;
  c.privacy.worst_case = worst_case;
  return spec.accountant(c);
}

std::vector<std::pair<std::string, std::string>> method_defaults_of(const std::string& method) {
  const auto* spec = methods::find_method(method);
  return spec ? spec->defaults() : std::vector<std::pair<std::string, std::string>>{};
}

std::vector<std::string> reasons_not_private(const Config& c) {
  const auto& spec = methods::method_spec(c.method_enum());
  if (!spec.is_private()) return {"method " + c.method + " is not private"};
  std::vector<std::string> why;
  if (c.privacy.noise_seed)
    why.push_back("privacy.noise_seed is pinned: the noise and the batches follow from the config");
  if (c.train.log_train_loss)
    why.push_back("train.log_train_loss releases the training loss on private labels without noise");
  if (c.train.model_selection == "best_val")
    why.push_back("train.model_selection: best_val chooses the saved model by the validation labels, without noise");
  if (auto own = spec.outside_guarantee(c)) why.push_back(*own);
  return why;
}

bool run_is_private(const Config& c) { return reasons_not_private(c).empty(); }

std::string method_pairing(const Config& c) { return methods::method_spec(c.method_enum()).pairing(c); }

}  // namespace dpgnn::train
