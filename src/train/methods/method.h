// The seam between the trainer and a training method. The trainer keeps the shape of a run
// (DESIGN.md "Shape of one training run"): shard, subgraphs, uniform batches, clipped sum,
// noise once at rank 0, one all-reduce, the optimiser step, the ledger. What differs from
// one method to the next lives in the method's own file under methods/ and is read through
// this interface:
//   - the sampler and its options (which subgraphs are one DP example, and where the loss is
//     taken: a SubgraphSet with loss_on_all_nodes puts it on every node of a subgraph);
//   - the model architecture it forces, if any;
//   - the mechanism/accountant pairing of one step (DESIGN.md 3) and the population the
//     accountant sees;
//   - the start-up checks that depend on the method (partition kind, bounds);
//   - whether, and when, the subgraph set is re-sampled (DRW-D);
//   - a release before training (DPAR's DP-APPR matrix), its privacy cost, and what it
//     changes in the examples (their features, the most examples one node enters).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/model/gnn.h"
#include "dpgnn/privacy/accountant.h"
#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/sampling/sampler.h"
#include "dpgnn/train/config.h"
#include "dpgnn/util/secure_rng.h"

namespace dpgnn::dist {
class Communicator;
}
namespace dpgnn::partition {
class PartitionFile;
struct Shard;
}  // namespace dpgnn::partition

namespace dpgnn::train::methods {

// Training labels released privately (DPAR's randomized response, dpar_labels.h): evidence
// the evaluator combines with the model's prediction at inference.
struct ReleasedLabels {
  std::int64_t categories = 0;
  double keep_probability = 0.0;      // P(released label = true label), exact
  std::vector<std::int64_t> nodes;    // dataset ids of the training nodes, sorted
  std::vector<std::int64_t> labels;   // the released label of each
};

// What the releases made before the first training step change (DPAR's DP-APPR matrix and
// its released labels).
struct PreRelease {
  std::string name;                               // the ledger's "release" label, e.g. "dp-appr"
  // The most training examples whose input one node's data enters after the release (g of
  // the group accountant; 1 when every example is one node alone).
  std::int64_t occurrence_bound = 1;
  // Nodes (global ids, sorted, the same on every rank) that are no longer examples of their
  // own: the trainer drops them from the subgraph set (their data is inside another example).
  std::vector<std::int64_t> removed_examples;
  // Shard row of an example -> its input features, for the examples the release changed
  // (rows this rank owns); every other example reads its own feature row.
  std::unordered_map<std::int64_t, std::vector<float>> example_features;
  std::string summary;                            // one line for the log
  // When set, only training nodes whose index (0..U-1 in id order) it accepts are examples
  // (DPAR's hidden graph sample); empty: every training node.
  std::function<bool(std::int64_t)> in_sample;
  std::optional<ReleasedLabels> labels;  // the released training labels, if any
  // The model's parameters as the release made them (flat, in the model's order; DPAR's class
  // sums: the linear model's weights); empty: the model's own initialisation.
  std::vector<float> initial_weights;
};

// A private release made once before the first training step (DPAR's DP-APPR), as an
// optional part of a method. The trainer's privacy plan (privacy_plan.h) calibrates its scale,
// records it in ONE ledger record with the digest of its stored form BEFORE anything uses it
// (write-ahead), stores it in the run directory, and on resume reuses the stored bytes: a
// release is never computed twice.
class PreTrainingRelease {
 public:
  virtual ~PreTrainingRelease() = default;
  virtual std::string name() const = 0;  // the ledger's name, e.g. "dp-appr"
  // The share of the target epsilon the release alone spends.
  virtual double budget_fraction(const Config& c) const = 0;
  // Whether the release is the run's last privacy cost and spends what the earlier releases
  // left of the target (calibrated after them, as DP-SGD's steps are; the method then takes no
  // steps: MethodSpec::takes_steps). Default: no, its own share.
  virtual bool spends_the_rest() const { return false; }
  // Its privacy events at noise scale z (calibration finds z for the share above).
  virtual std::vector<privacy::AccountantEvent> events(const Config& c, const graph::DatasetMeta& meta,
                                                       double z) const = 0;
  // A reason the release cannot be made on this dataset, or nothing.
  virtual std::optional<std::string> refusal(const Config&, const graph::DatasetMeta&) const { return std::nullopt; }
  // The run sees only a hidden uniform sample of the privacy units, and every epsilon is
  // amplified by it (privacy/subsample.h); default: none.
  virtual std::optional<privacy::Subsample> outer_subsample(const Config&, std::int64_t /*total_train*/) const {
    return std::nullopt;
  }
  // Collective: computes the release at scale z; its stored form, the same bytes on every rank.
  // `key`: a secret every rank holds (the batch secret).
  virtual std::string compute(const Config& c, const partition::PartitionFile& pf, const partition::Shard& shard,
                              dist::Communicator& comm, const Secret& key, double z) const = 0;
  // Collective: what a stored release changes in the examples (every rank, the same bytes).
  virtual PreRelease apply(const Config& c, const std::string& stored, const partition::PartitionFile& pf,
                           const partition::Shard& shard, dist::Communicator& comm, const Secret& key) const = 0;
};

// A training method: the one place its identity lives (name, private or not, its accountant
// pairing, its defaults and checks) beside how it samples, models and accounts. The registry
// (method.cpp) lists every method; config.cpp and the CLI read them from here.
class MethodSpec {
 public:
  virtual ~MethodSpec() = default;

  // ---- identity
  virtual std::string name() const = 0;
  virtual bool is_private() const { return true; }
  // Shares the random-walk sampler (privacy.worst_case's M_min applies).
  virtual bool uses_random_walks() const { return false; }
  // The accountant the method is paired with (DESIGN.md 3), as summaries name it.
  virtual std::string accountant(const Config& c) const;
  // The sampler and accountant pairing, one phrase (train --check).
  virtual std::string pairing(const Config& c) const = 0;
  // Defaults that replace the config table's for this method ("key", "YAML value").
  virtual std::vector<std::pair<std::string, std::string>> defaults() const { return {}; }
  // The config with the choices the method makes from public facts of the data (the class
  // count, the training mask's size) resolved, before anything is calibrated; the run binds
  // and records the resolved config. Default: `c` as it is.
  virtual Config resolved(const Config& c, const graph::DatasetMeta&, std::int64_t /*total_train*/) const { return c; }
  // Whether the method trains by steps (DP-SGD or plain SGD); false when a pre-training release
  // makes the model (DPAR's class sums): no step is taken and no step noise is calibrated.
  virtual bool takes_steps(const Config&) const { return true; }
  // Why this config, though the method is private, is outside the guarantee, or nothing.
  virtual std::optional<std::string> outside_guarantee(const Config&) const { return std::nullopt; }

  // The sampler that builds the disjoint (or bounded-overlap) training subgraphs.
  virtual sampling::SamplerOptions sampler_options(const Config& c) const = 0;

  // The sampler for one partition part, given every part's number of training nodes.
  // Default: sampler_options(c) for every part.
  virtual sampling::SamplerOptions part_sampler_options(const Config& c, int part,
                                                        const std::vector<std::int64_t>& part_train_nodes) const;

  // The batch when train.batch_size is 0 (auto), given M examples. Default: min(256, M / 2).
  virtual std::int64_t auto_batch_size(std::int64_t realised) const;

  // The model architecture; default: what model.arch names.
  virtual model::Arch arch(const Config& c) const { return model::parse_arch(c.model.arch); }

  // A reason to refuse the run on a partition made by `partition_method` ("metis",
  // "random", ...), or nothing. Default: every partition is fine.
  virtual std::optional<std::string> refuse_partition(const Config& c, const std::string& partition_method) const;

  // The population the accountant samples from, given the realised number of subgraphs M
  // and the number of training nodes. Default: M itself.
  virtual std::int64_t population(const Config& c, std::int64_t realised, std::int64_t total_train) const;

  // A reason to refuse the privacy set-up before calibration (realised M), or nothing.
  virtual std::optional<std::string> check_privacy(const Config& c, std::int64_t realised) const;

  // The mechanism of one step: batch m of `realised` subgraphs (population() is applied by
  // the method where its accountant wants it), noise multiplier z. Default: fixed-size
  // sampling without replacement, replace-one (Wang, Balle, Kasiviswanathan 2019).
  // `occurrence_bound`: PreRelease::occurrence_bound (1 without a pre-training release).
  virtual privacy::Mechanism mechanism(const Config& c, std::int64_t realised, std::int64_t total_train,
                                       std::int64_t m, double z, std::int64_t occurrence_bound = 1) const;

  // The sampler epoch of step t: the subgraph set is re-sampled whenever it changes.
  // Default: 0 for every step (one set for the whole run).
  virtual std::uint64_t epoch_of_step(const Config& c, std::int64_t t) const;

  // The method's pre-training releases for this config, in the order they are made (the
  // default: none).
  virtual std::vector<const PreTrainingRelease*> pre_training_releases(const Config&) const { return {}; }
  // Post-processing applied at evaluation (DPAR: power iteration); 0 steps = none.
  struct Propagation {
    int steps = 0;          // power-iteration steps, 0 = the model's outputs as they are
    double alpha = 0.25;    // teleport probability
    bool center = false;    // centre the outputs over all nodes first (Evaluator::set_propagation)
    bool keep_shares = false;  // offset the propagated outputs back to the model's class shares (ditto)
  };
  virtual Propagation propagation(const Config&, const graph::DatasetMeta&) const { return {}; }
};

// Every registered method, in the order --help lists them.
const std::vector<const MethodSpec*>& all_methods();

// The refusal of a METIS partition for a node-level DP method (DESIGN.md 5: the structure is
// private, and METIS's assignment depends on it), or nothing for any other partition.
std::optional<std::string> refuse_metis_for_node_level_dp(const Config& c, const std::string& partition_method);

// Every training node alone is one example (the `node` sampler): DP-MLP, MLP and DPAR.
sampling::SamplerOptions single_node_sampler(const Config& c);

// The automatic batch of the replace-one WOR methods (DRW, DRW-R, DRW-D, graph splits): every
// example (a full batch, q = 1) while there are at most kFullBatchLimit, else the default
// min(256, M / 2). Why: the WOR bound (Wang, Balle & Kasiviswanathan 2019) gives almost no
// amplification at moderate q, so a full batch, which is plain Gaussian composition, needs
// about the same noise multiplier as half a batch for twice the examples: about twice the
// signal per unit of noise (docs/configs.md, "Method defaults"). Beyond the limit a full batch
// costs an epoch per step, and the noise is small next to the gradients anyway.
constexpr std::int64_t kFullBatchLimit = 4096;
std::int64_t full_batch_while_small(std::int64_t realised);

// The method a config names (static instances; never null).
const MethodSpec& method_spec(Method m);
// The method called `name`, or nullptr.
const MethodSpec* find_method(const std::string& name);

// The model the trainer builds for `c` on a dataset described by `meta` (the method's
// architecture rule, the config's sizes); validated. Shared by train, predict and audit so
// that a saved model.h5 and an audit's initial weights match the trained model exactly.
model::ModelConfig model_config(const Config& c, const graph::DatasetMeta& meta);

// One accessor per method file (the registry in method.cpp maps Method to these).
namespace detail {
const MethodSpec& drw_spec();    // drw.cpp
const MethodSpec& drw_r_spec();  // drw.cpp
const MethodSpec& drw_d_spec();  // drw.cpp
const MethodSpec& gcn_spec();    // gcn.cpp
const MethodSpec& dpgnn_spec();  // dpgnn.cpp
const MethodSpec& dp_mlp_spec(); // mlp.cpp
const MethodSpec& mlp_spec();    // mlp.cpp
const MethodSpec& split_spec();  // split.cpp
const MethodSpec& dpar_spec();   // dpar.cpp
}  // namespace detail

}  // namespace dpgnn::train::methods
