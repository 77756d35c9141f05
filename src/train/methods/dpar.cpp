// DPAR (Zhang et al., "DPAR: Decoupled Graph Neural Networks with Node-Level Differential
// Privacy"; ../shared/papers/dpar_decoupled-dp-pagerank_zhang.txt), node-level DP:
//   release : DP-APPR (Sec. 3.1; Algorithm 1 options I/II = em0/em1, Algorithm 3 = gm) of
//             dpar.appr_nodes training nodes, calibrated to dpar.appr_fraction of the target
//             epsilon on its own (train/dpar_appr.h says how and why it is private);
//   sampler : every training node is one example (the `node` sampler); an example whose node
//             has a DP-APPR row aggregates its top-K nodes' features with the released
//             weights, the others their own features (the paper's "one-hot APPR vector",
//             Sec. 4 "Features");
//   model   : the decoupled model, an MLP f_theta (Eq. 1; the weighted sum is taken over the
//             features, before f_theta: the first layer is linear, so only the hidden
//             activation sees the mixture);
//   mechanism: DP-SGD (Algorithm 2) with m of the N examples uniformly without replacement;
//             the released rows are folded (fold_rows in dpar_appr.h: a node kept in another
//             source's row is no longer an example of its own), so one node enters g = 1
//             example, each clipped gradient moving by at most 2C; the step is the group
//             accountant "groupwor" (Daigavane et al., Theorem 1 with N(K, r) replaced by the
//             measured g), composed after the release's events (Mironov 2017, Prop. 1);
//   inference: P power-iteration steps over the evaluation graph (Sec. 4, Eq. 4);
//   labels  : with dpar.label_fraction (not in the paper), the training labels released by
//             randomized response before training (dpar_labels.h) and combined with the
//             model's predictions before the power iteration;
//   class sums: with dpar.learner class_sums (or auto, where its rule holds; not in the paper)
//             f_theta's weights are one Gaussian release of the per-class feature sums, which
//             spends what the label release leaves, and no DP-SGD step is taken
//             (dpar_class_sums.h);
//   graph sampling: with dpar.graph_sampling_rate q' < 1 all of the above runs on a hidden
//             uniform sample of the training nodes and the epsilon is amplified by it
//             (outer_subsample; Sec. 3.2, Balle, Barthe & Gaboardi 2018 Sec. 5).
// The node-to-rank assignment must not depend on the private structure (DESIGN.md 5).
#include "method.h"

#include <algorithm>

#include "dpar_appr.h"
#include "dpar_class_sums.h"
#include "dpar_labels.h"
#include "dpgnn/partition/partition_file.h"

namespace dpgnn::train::methods {
namespace {

// DP-APPR as the method's pre-training release: computed once, stored, reused on resume.
class DparRelease : public PreTrainingRelease {
 public:
  std::string name() const override { return "dp-appr"; }
  double budget_fraction(const Config& c) const override { return c.dpar.appr_fraction; }
  std::vector<privacy::AccountantEvent> events(const Config& c, const graph::DatasetMeta&, double z) const override {
    return dp_appr_events(c.dpar, c.dpar.appr_nodes, z);
  }
  // Graph sampling (Sec. 3.2): the release and the steps see only a hidden uniform sample of
  // m' of the U training nodes (dpar_appr.h), so the run's epsilon is amplified at q = m'/U.
  std::optional<privacy::Subsample> outer_subsample(const Config& c, std::int64_t total_train) const override {
    if (c.dpar.graph_sampling_rate >= 1.0) return std::nullopt;
    return privacy::Subsample::of(total_train, graph_sample_size(c.dpar, total_train));
  }
  std::string compute(const Config& c, const partition::PartitionFile& pf, const partition::Shard& shard,
                      dist::Communicator& comm, const Secret& key, double z) const override {
    const ApprRelease r = release_dp_appr(c.dpar, pf, shard, comm, key, z);
    return serialise_release(r);
  }
  PreRelease apply(const Config& c, const std::string& stored, const partition::PartitionFile& pf,
                   const partition::Shard& shard, dist::Communicator& comm, const Secret& key) const override {
    const ApprRelease r = parse_release(stored, "the stored DP-APPR release");
    PreRelease p;
    p.name = name();
    p.occurrence_bound = r.occurrence_bound;
    p.removed_examples = r.folded;
    p.example_features = aggregated_features(r.rows, pf, shard, c.model.input_norm);
    p.in_sample = graph_sample_membership(c.dpar, pf, comm, key);
    p.summary = "DP-APPR (" + c.dpar.mechanism + "): " + std::to_string(r.rows.size()) + " rows of top-" +
                std::to_string(c.dpar.top_k) + " over " + std::to_string(r.universe) +
                (p.in_sample ? " sampled" : "") + " training nodes, occurrence bound g = " +
                std::to_string(r.occurrence_bound) + ", " + std::to_string(r.folded.size()) +
                " examples folded into rows";
    return p;
  }
};

// The training labels by k-ary randomized response (dpar_labels.h): one event, its own share.
class LabelRelease : public PreTrainingRelease {
 public:
  std::string name() const override { return kLabelReleaseName; }
  double budget_fraction(const Config& c) const override { return c.dpar.label_fraction; }
  std::vector<privacy::AccountantEvent> events(const Config&, const graph::DatasetMeta& meta, double z) const override {
    return {{privacy::Mechanism::randomized_response(meta.num_classes, z), 1}};
  }
  std::optional<std::string> refusal(const Config& c, const graph::DatasetMeta& meta) const override {
    if (meta.multilabel)
      return c.source + ": key 'dpar.label_fraction': the label release needs one class per node, and the dataset "
                        "is multi-label (set dpar.label_fraction: 0)";
    if (meta.num_classes < 2)
      return c.source + ": key 'dpar.label_fraction': the label release needs at least 2 classes";
    return std::nullopt;
  }
  std::string compute(const Config&, const partition::PartitionFile&, const partition::Shard& shard,
                      dist::Communicator& comm, const Secret& key, double z) const override {
    return serialise_labels(release_labels(shard, comm, key, z));
  }
  PreRelease apply(const Config&, const std::string& stored, const partition::PartitionFile&,
                   const partition::Shard&, dist::Communicator&, const Secret&) const override {
    PreRelease p;
    p.name = name();
    p.labels = parse_labels(stored, "the stored label release");
    p.summary = "labels by randomized response: " + std::to_string(p.labels->nodes.size()) +
                " training labels over " + std::to_string(p.labels->categories) + " classes, each kept with probability " +
                std::to_string(p.labels->keep_probability);
    return p;
  }
};

// The class sums (dpar_class_sums.h): the linear model's weights in one Gaussian release, the
// last privacy cost of the run (after the label release, if any), so it spends the rest.
class ClassSumsRelease : public PreTrainingRelease {
 public:
  std::string name() const override { return kClassSumsReleaseName; }
  double budget_fraction(const Config& c) const override {
    return 1.0 - (label_release_on(c) ? c.dpar.label_fraction : 0.0);
  }
  bool spends_the_rest() const override { return true; }
  std::vector<privacy::AccountantEvent> events(const Config&, const graph::DatasetMeta&, double z) const override {
    return {{privacy::Mechanism::gaussian(z), 1}};
  }
  std::optional<std::string> refusal(const Config& c, const graph::DatasetMeta& meta) const override {
    if (meta.multilabel)
      return c.source + ": key 'dpar.learner': class_sums needs one class per node, and the dataset is multi-label "
                        "(set dpar.learner: sgd)";
    if (meta.num_classes < 2) return c.source + ": key 'dpar.learner': class_sums needs at least 2 classes";
    return std::nullopt;
  }
  std::string compute(const Config&, const partition::PartitionFile& pf, const partition::Shard& shard,
                      dist::Communicator& comm, const Secret& key, double z) const override {
    std::int64_t total_train = 0;
    for (auto n : pf.part_train_nodes()) total_train += n;
    return serialise_class_sums(release_class_sums(shard, comm, key, z, total_train));
  }
  PreRelease apply(const Config&, const std::string& stored, const partition::PartitionFile&,
                   const partition::Shard&, dist::Communicator&, const Secret&) const override {
    const ClassSums r = parse_class_sums(stored, "the stored class sums");
    PreRelease p;
    p.name = name();
    p.initial_weights = class_sum_weights(r);
    p.summary = "class sums: the linear model's " + std::to_string(r.classes) + " x " + std::to_string(r.features) +
                " weights released once over " + std::to_string(r.training_nodes) +
                " training nodes (no DP-SGD steps)";
    return p;
  }
};

class Dpar : public MethodSpec {
 public:
  std::string name() const override { return "dpar"; }
  std::string accountant(const Config& c) const override {
    return c.dpar.learner == "class_sums" ? "dpar_class_sums_gaussian" : "dpar_appr_then_group_wor";
  }
  std::string pairing(const Config& c) const override {
    if (c.dpar.learner == "class_sums")
      return std::string(label_release_on(c) ? "the training labels by randomized response (" +
                                                   std::to_string(static_cast<int>(c.dpar.label_fraction * 100 + 0.5)) +
                                                   "% of the budget), then "
                                             : "") +
             "the class sums of the training nodes' features as the linear model, one Gaussian release (sensitivity "
             "sqrt(2)), no DP-SGD steps, accountant " + accountant(c) + " (one gaussian event)";
    if (c.dpar.learner == "auto") {
      // Both pairings, each naming its accountant: the data decides between them (resolved()).
      Config sums = c, sgd = c;
      sums.dpar.learner = "class_sums";
      sgd.dpar.learner = "sgd";
      // What the config alone rules out (class_sums_chosen's conditions other than the data's).
      if (c.dpar.appr_nodes > 0 || label_release_on(c) || c.privacy.noise_multiplier || c.model.layers != 1 ||
          c.model.bias)
        return "dpar.learner auto, DP-SGD with this config: " + pairing(sgd);
      return "dpar.learner auto, decided on the dataset's class count and training mask: either " + pairing(sums) +
             "; or " + pairing(sgd);
    }
    return (c.dpar.appr_nodes > 0
                ? "DP-APPR (" + c.dpar.mechanism + ", M " + std::to_string(c.dpar.appr_nodes) + ", K " +
                      std::to_string(c.dpar.top_k) + ", " +
                      std::to_string(static_cast<int>(c.dpar.appr_fraction * 100 + 0.5)) + "% of the budget)"
                : std::string("no DP-APPR release")) +
           (label_release_on(c) ? ", the training labels by randomized response (" +
                                      std::to_string(static_cast<int>(c.dpar.label_fraction * 100 + 0.5)) + "% of the budget)"
                                : std::string()) +
           " then sampler single nodes with their top-K aggregation, accountant " + accountant(c) +
           " (sensitivity 2C g, g = most examples one node is in)";
  }
  // The Coauthor CS search at epsilon 1 (linear f_theta on l2-normalised features, every
  // example in every step through train.batch_size 0, 100 steps, most of the budget to DP-SGD).
  std::vector<std::pair<std::string, std::string>> defaults() const override {
    return {{"model.layers", "1"}, {"model.input_norm", "l2"}, {"train.max_steps", "100"}, {"train.lr", "0.1"},
            {"dpar.appr_fraction", "0.1"}};
  }
  sampling::SamplerOptions sampler_options(const Config& c) const override { return single_node_sampler(c); }
  model::Arch arch(const Config&) const override { return model::Arch::kMlp; }
  // Every example (a full batch): large batches and few steps learn best at small budgets,
  // and at q = 1 the groupwor bound needs the least noise per example (docs/results.md,
  // Coauthor CS). The step is one linear pass over the examples, so even at ogbn-products'
  // size it costs about what the evaluation does (docs/benchmarks.md). Sized again after the
  // release has folded examples away.
  std::int64_t auto_batch_size(std::int64_t realised) const override { return std::max<std::int64_t>(1, realised); }

  std::optional<std::string> refuse_partition(const Config& c, const std::string& partition_method) const override {
    return refuse_metis_for_node_level_dp(c, partition_method);
  }

  privacy::Mechanism mechanism(const Config&, std::int64_t realised, std::int64_t, std::int64_t m, double z,
                               std::int64_t occurrence_bound) const override {
    return privacy::Mechanism::group_wor(realised, m, occurrence_bound, z);
  }

  // dpar.appr_nodes 0: no DP-APPR release (every node its own example, g = 1), so with no label
  // release either the history is the steps alone and the PLD accountant can take it.
  // The class sums come last: they spend what the label release leaves.
  std::vector<const PreTrainingRelease*> pre_training_releases(const Config& c) const override {
    std::vector<const PreTrainingRelease*> r;
    if (c.dpar.appr_nodes > 0) r.push_back(&appr_);
    if (label_release_on(c)) r.push_back(&labels_);
    if (c.dpar.learner == "class_sums") r.push_back(&class_sums_);
    return r;
  }
  // dpar.learner auto: the class sums or DP-SGD, by the rule of class_sums_chosen (public facts).
  Config resolved(const Config& c, const graph::DatasetMeta& meta, std::int64_t total_train) const override {
    Config r = c;
    if (c.dpar.learner == "auto") r.dpar.learner = class_sums_chosen(c, meta, total_train) ? "class_sums" : "sgd";
    return r;
  }
  bool takes_steps(const Config& c) const override { return c.dpar.learner != "class_sums"; }
  // dpar.center_outputs: the outputs centred over the nodes, then the centred propagation
  // (docs/results.md, "Issue 37: centred outputs"); otherwise the paper's (Sec. 4, Eq. 4).
  // multiclass: not with the label release, whose released labels give inference the class
  // prior back (and where, from epsilon 6, the noise's offsets are small).
  Propagation propagation(const Config& c, const graph::DatasetMeta& meta) const override {
    const bool center = c.dpar.center_outputs == "always" ||
                        (c.dpar.center_outputs == "multiclass" && !meta.multilabel && meta.num_classes >= 3 &&
                         !label_release_on(c));
    // dpar.keep_class_shares: binary, on two-class data without the label release (docs/results.md,
    // "Issue 37: class shares kept"; the released labels give inference its own evidence of the shares).
    const bool keep_shares = c.dpar.keep_class_shares == "binary" && !meta.multilabel && meta.num_classes == 2 &&
                             !label_release_on(c);
    if (center) return {c.dpar.centered_steps, c.dpar.centered_alpha, true, keep_shares};
    return {c.dpar.propagation_steps, c.dpar.alpha, false, keep_shares};
  }

 private:
  DparRelease appr_;
  LabelRelease labels_;
  ClassSumsRelease class_sums_;
};

}  // namespace

namespace detail {
const MethodSpec& dpar_spec() {
  static const Dpar s;
  return s;
}
}  // namespace detail

}  // namespace dpgnn::train::methods
