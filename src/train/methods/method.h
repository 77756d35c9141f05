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
//   - whether, and when, the subgraph set is re-sampled (DRW-D).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/model/gnn.h"
#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/sampling/sampler.h"
#include "dpgnn/train/config.h"

namespace dpgnn::train::methods {

class MethodSpec {
 public:
  virtual ~MethodSpec() = default;

  // The sampler that builds the disjoint (or bounded-overlap) training subgraphs.
  virtual sampling::SamplerOptions sampler_options(const Config& c) const = 0;

  // The sampler for one partition part, given every part's number of training nodes.
  // Default: sampler_options(c) for every part.
  virtual sampling::SamplerOptions part_sampler_options(const Config& c, int part,
                                                        const std::vector<std::int64_t>& part_train_nodes) const;

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
  virtual privacy::Mechanism mechanism(const Config& c, std::int64_t realised, std::int64_t total_train,
                                       std::int64_t m, double z) const;

  // The sampler epoch of step t: the subgraph set is re-sampled whenever it changes.
  // Default: 0 for every step (one set for the whole run).
  virtual std::uint64_t epoch_of_step(const Config& c, std::int64_t t) const;
};

// The method a config names (static instances; never null).
const MethodSpec& method_spec(Method m);

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
}  // namespace detail

}  // namespace dpgnn::train::methods
