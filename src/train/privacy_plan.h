// A run's privacy plan (DESIGN.md 2, 3, 7, 8): the mechanism of a step and its calibrated
// noise, the pre-training releases (each calibrated to its share of the budget, recorded write-ahead,
// stored, reused on resume), the discrete Gaussian's grid, and - at rank 0 - the accountant
// and the ledger.
//
// Order of a run: calibrate() (each release's scale for its own share, then the steps with
// g = 1); the releases in order (release_before_training: each reused from the run directory
// when the ledger records it, else computed, recorded in ONE ledger record with its digest,
// stored, and only then used); the steps recalibrated after all of them with the real
// occurrence bound g; then one ledger line per step, durable before the step's result is used
// (record_step).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dpgnn/privacy/accountant.h"
#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/train/config.h"
#include "dpgnn/train/ledger.h"
#include "dpgnn/noise/discrete_gaussian.h"
#include "methods/method.h"

namespace dpgnn::train {

class RunDirectory;
class SubgraphEpochs;

class PrivacyPlan {
 public:
  PrivacyPlan(const Config& cfg, const methods::MethodSpec& spec, const graph::DatasetMeta& meta, int rank);

  bool is_private() const { return private_; }
  // Collective-safe (every rank computes the same): the release's scale and the steps' noise.
  void calibrate(const SubgraphEpochs& epochs);
  // The same noise multiplier for the current subgraph set (DRW-D re-sampling).
  void follow(const SubgraphEpochs& epochs);
  // The grid for `num_params` coordinates and the current batch (checked; CollectiveError).
  void make_grid(std::int64_t num_params, std::int64_t batch);

  // Rank 0: the accountant (rebuilt from `ledger` when resuming) and the ledger writer.
  void open_ledger(const std::string& path, const std::optional<Ledger>& ledger);
  // Collective: the releases before training (see above); empty when the method has none.
  // `dir` is used at rank 0 only.
  methods::PreRelease release_before_training(const Config& cfg, const partition::PartitionFile& pf,
                                              const partition::Shard& shard, dist::Communicator& comm,
                                              const Secret& batch_secret, const RunDirectory* dir,
                                              const std::optional<Ledger>& ledger, SubgraphEpochs& epochs);

  // Rank 0: records step `step` (accountant, then the durable ledger line).
  void record_step(std::int64_t step);
  // Rank 0: whether one more step would exceed the target.
  bool next_step_exceeds() const;
  // Rank 0: the last step (exclusive) the budget allows from `from`, at most max_steps (for the ETA).
  std::int64_t budget_end(std::int64_t from, std::int64_t max_steps) const;
  // Collective-safe, for a dry run: the steps a fresh run may take within the target at the
  // calibrated noise (after the release's events, with g = 1), at most max_steps.
  std::int64_t planned_steps() const;
  // The most steps the run takes: train.max_steps, or 0 when the method takes none
  // (MethodSpec::takes_steps: a release made the model).
  std::int64_t max_steps() const;
  bool takes_steps() const { return steps_; }
  // Which accountant gives that fresh run's epsilon: "pld", or "rdp" where privacy.accountant
  // is rdp or the history holds a mechanism without a PLD pair (DPAR's exponential and
  // randomized-response releases); "none" for a run that is not private.
  std::string planned_epsilon_source() const;
  double epsilon() const;        // rank 0: spent so far (exact; a PLD composition: not per step)
  // Rank 0: an upper bound on epsilon() cheap enough for every step (ledger lines, metrics,
  // progress): the RDP accountant's epsilon of the same history, and under pld at most the
  // target (no step is taken unless the pld epsilon stays within it). Both bound the pld
  // epsilon; O(orders) per step where a PLD composition costs 0.1-0.7 s. summary.json has the
  // exact value.
  double epsilon_bound() const;
  // Rank 0: what the last epsilon() came from ("pld" or "rdp").
  std::string epsilon_source() const;
  double epsilon_order() const;  // rank 0: the minimising order
  void record_end(const nlohmann::json& end);

  const privacy::Mechanism& mechanism() const { return mech_; }
  double noise_multiplier() const { return z_; }
  double sigma() const { return sigma_; }
  const noise::NoiseGrid& grid() const { return grid_; }
  std::int64_t occurrence_bound() const { return occurrence_; }
  const std::optional<privacy::Subsample>& outer_subsample() const { return outer_subsample_; }
  // Every release's events, in order (the accountant's history before the first step).
  const std::vector<privacy::AccountantEvent>& release_events() const { return release_events_; }
  const std::vector<const methods::PreTrainingRelease*>& releases() const { return releases_; }
  double release_scale(std::size_t i) const { return release_z_[i]; }
  const std::vector<privacy::AccountantEvent>& events_of(std::size_t i) const { return events_of_[i]; }
  std::string describe() const;  // one log line

 private:
  double calibrate_steps_noise(const SubgraphEpochs& epochs) const;
  void set_steps_noise(const SubgraphEpochs& epochs);  // z_, mech_, sigma_ of the steps
  // A fresh run's history before its steps: the releases' events (and the outer subsample).
  privacy::Accountant fresh_run_history() const;
  privacy::Mechanism mechanism_for(const SubgraphEpochs& epochs, double z) const;
  void ensure(bool ok, const std::string& message) const;
  // Collective: release i (reused, recomputed-and-checked, or made and recorded first).
  methods::PreRelease make_release(std::size_t i, const Config& cfg, const partition::PartitionFile& pf,
                                   const partition::Shard& shard, dist::Communicator& comm, const Secret& batch_secret,
                                   const RunDirectory* dir, const std::optional<Ledger>& ledger);

  const Config& cfg_;
  const methods::MethodSpec& spec_;
  const graph::DatasetMeta& meta_;
  int rank_;
  bool private_;
  bool steps_;  // the method takes steps (a private run without them: the release is the model)
  std::vector<const methods::PreTrainingRelease*> releases_;
  std::optional<privacy::Subsample> outer_subsample_;
  privacy::Conversion conversion_;
  privacy::AccountantKind kind_;
  std::vector<double> release_z_;                                     // per release
  std::vector<std::vector<privacy::AccountantEvent>> events_of_;      // per release
  std::vector<privacy::AccountantEvent> release_events_;              // all, in order
  std::int64_t occurrence_ = 1;
  double z_ = 0.0;
  double sigma_ = 0.0;
  privacy::Mechanism mech_ = privacy::Mechanism::gaussian(1.0);
  noise::NoiseGrid grid_;
  std::int64_t num_params_ = 0;
  std::optional<privacy::Accountant> accountant_;
  std::optional<privacy::Accountant> rdp_shadow_;  // the same history by RDP, for epsilon_bound
  std::unique_ptr<LedgerWriter> ledger_;
};

}  // namespace dpgnn::train
