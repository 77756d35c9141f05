#include "privacy_plan.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "dpgnn/dist/communicator.h"
#include "dpgnn/privacy/calibration.h"
#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/noise_convention.h"
#include "dpgnn/util/digest.h"
#include "dpgnn/util/error.h"
#include "collective_text.h"
#include "fault_points.h"
#include "run_directory.h"
#include "subgraph_epochs.h"

namespace dpgnn::train {
namespace {
// A kill point of a release: `point` (the tests' name for the first release's) and point:name.
void release_fault_point(const std::string& point, const std::string& name) {
  fault_point(point);
  fault_point(point + ":" + name);
}
}  // namespace

PrivacyPlan::PrivacyPlan(const Config& cfg, const methods::MethodSpec& spec, const graph::DatasetMeta& meta, int rank)
    : cfg_(cfg),
      spec_(spec),
      meta_(meta),
      rank_(rank),
      private_(spec.is_private()),
      steps_(!spec.is_private() || spec.takes_steps(cfg)),
      releases_(spec.is_private() ? spec.pre_training_releases(cfg)
                                  : std::vector<const methods::PreTrainingRelease*>{}),
      conversion_(cfg.privacy.conversion == "mironov" ? privacy::Conversion::kMironov : privacy::Conversion::kBalle),
      kind_(privacy::parse_accountant(cfg.privacy.accountant)) {}

void PrivacyPlan::ensure(bool ok, const std::string& message) const {
  if (!ok) throw CollectiveError(message, kExitUsage, rank_ == 0);
}

privacy::Mechanism PrivacyPlan::mechanism_for(const SubgraphEpochs& e, double z) const {
  return spec_.mechanism(cfg_, e.M(), e.total_train(), e.m(), z, occurrence_);
}

double PrivacyPlan::calibrate_steps_noise(const SubgraphEpochs& epochs) const {
  if (!steps_) return 0.0;  // no steps: nothing to calibrate (a release made the model)
  if (cfg_.privacy.noise_multiplier) return *cfg_.privacy.noise_multiplier;
  privacy::CalibrationOptions co;
  co.conversion = conversion_;
  co.accountant = kind_;
  co.subsample = outer_subsample_;
  if (!release_events_.empty()) co.prior_rdp = privacy::events_rdp(release_events_, privacy::default_orders());
  try {
    return privacy::calibrate_noise_multiplier(mechanism_for(epochs, 1.0), cfg_.train.max_steps,
                                               cfg_.privacy.target_epsilon, cfg_.privacy.delta, co)
        .noise_multiplier;
  } catch (const std::invalid_argument& e) {
    ensure(false, cfg_.source + ": cannot calibrate privacy.noise_multiplier: " + e.what());
  }
  return 0.0;
}

void PrivacyPlan::calibrate(const SubgraphEpochs& epochs) {
  if (!private_) return;
  // Only DP-APPR knows a graph sample (the label release refuses one: config.cpp).
  outer_subsample_.reset();
  for (const auto* r : releases_)
    if (auto sub = r->outer_subsample(cfg_, epochs.total_train())) outer_subsample_ = sub;
  ensure(epochs.m() <= epochs.population(),
         cfg_.source + ": key 'train.batch_size' (" + std::to_string(epochs.m()) +
             ") exceeds the worst-case population M_min = " + std::to_string(epochs.population()));
  const auto refusal = spec_.check_privacy(cfg_, epochs.M());
  ensure(!refusal, refusal.value_or(""));
  release_z_.clear();
  events_of_.clear();
  release_events_.clear();
  for (const auto* r : releases_) {
    const auto why = r->refusal(cfg_, meta_);
    ensure(!why, why.value_or(""));
    // Each release alone spends its share of the target; the steps are calibrated after all. A
    // release that spends the rest is calibrated after the others, as the steps are.
    privacy::CalibrationOptions co;
    co.conversion = conversion_;
    co.accountant = kind_;
    co.subsample = outer_subsample_;
    const bool rest = r->spends_the_rest();
    if (rest && !release_events_.empty()) co.prior_rdp = privacy::events_rdp(release_events_, privacy::default_orders());
    double z = 0.0;
    try {
      z = privacy::calibrate_events([&](double s) { return r->events(cfg_, meta_, s); },
                                    (rest ? 1.0 : r->budget_fraction(cfg_)) * cfg_.privacy.target_epsilon,
                                    cfg_.privacy.delta, co)
              .noise_multiplier;
    } catch (const std::invalid_argument& e) {
      ensure(false, cfg_.source + ": cannot calibrate the pre-training release " + r->name() + ": " + e.what());
    }
    release_z_.push_back(z);
    events_of_.push_back(r->events(cfg_, meta_, z));
    release_events_.insert(release_events_.end(), events_of_.back().begin(), events_of_.back().end());
  }
  set_steps_noise(epochs);
}

void PrivacyPlan::set_steps_noise(const SubgraphEpochs& epochs) {
  z_ = calibrate_steps_noise(epochs);
  // Without steps the mechanism only names the population (summaries); sigma stays 0.
  mech_ = mechanism_for(epochs, steps_ ? z_ : 1.0);
  sigma_ = steps_ ? privacy::noise_std(mech_, cfg_.privacy.clip_norm) : 0.0;
}

void PrivacyPlan::follow(const SubgraphEpochs& epochs) {
  if (!private_) return;
  mech_ = mechanism_for(epochs, z_);
  make_grid(num_params_, epochs.m());  // the same sigma and z: the same grid, checked for the new batch
}

void PrivacyPlan::make_grid(std::int64_t num_params, std::int64_t batch) {
  if (!private_ || !steps_) return;
  num_params_ = num_params;
  try {
    // With a hidden sample, exchanging a sampled node for another can move its example to
    // another rank: two ranks' roundings to the grid change (noise.h).
    grid_ = noise::make_noise_grid(sigma_, sigma_ / z_, num_params, outer_subsample_ ? 2 : 1);
    noise::check_exact_grid_sum(grid_, cfg_.privacy.clip_norm, batch);
  } catch (const UsageError& e) {
    ensure(false, cfg_.source + ": " + e.what());
  }
}

void PrivacyPlan::open_ledger(const std::string& path, const std::optional<Ledger>& ledger) {
  if (!private_ || rank_ != 0) return;
  accountant_.emplace(kind_, std::vector<double>{}, conversion_);
  rdp_shadow_.emplace(privacy::AccountantKind::kRdp, std::vector<double>{}, conversion_);
  // The ledger's history replayed into the run's accountant: the same epsilon bit for bit.
  if (ledger) {
    const std::string history = accountant_from_ledger(ledger->entries, conversion_).serialise();
    accountant_->restore(history);
    rdp_shadow_->restore(history);
  }
  if (outer_subsample_) {
    accountant_->set_subsample(*outer_subsample_);
    rdp_shadow_->set_subsample(*outer_subsample_);
  }
  ledger_ = std::make_unique<LedgerWriter>(path);
}

methods::PreRelease PrivacyPlan::make_release(std::size_t i, const Config& cfg, const partition::PartitionFile& pf,
                                              const partition::Shard& shard, dist::Communicator& comm,
                                              const Secret& batch_secret, const RunDirectory* dir,
                                              const std::optional<Ledger>& ledger) {
  const methods::PreTrainingRelease& release = *releases_[i];
  // 0: never released; 1: recorded and stored; 2: recorded but not stored (a crash between the
  // record and the file): computed again with the SAME secret, accepted only if its digest is
  // the recorded one - the same bytes, nothing new released.
  std::int64_t state = 0;
  std::string bytes;
  const ReleaseRecord* recorded = nullptr;
  if (rank_ == 0 && ledger)
    for (const auto& r : ledger->releases)
      if (r.name == release.name()) recorded = &r;
  if (recorded) {
    if (dir->has_release(*recorded)) {
      bytes = dir->read_release(*recorded);  // checked against its digest; never recomputed
      state = 1;
    } else {
      state = 2;
    }
  }
  comm.broadcast(&state, 1, 0);
  if (state != 1) {
    if (state == 0) release_fault_point("before-release", release.name());
    bytes = release.compute(cfg, pf, shard, comm, batch_secret, release_z_[i]);
    if (rank_ == 0 && state == 2) {
      if (blake2b_digest(bytes) != recorded->digest || secret_fingerprint(batch_secret, "batch") != recorded->key_fingerprint)
        throw Error("the recomputed " + release.name() + " release does not match its ledger record", kExitInternal);
      dir->store_release(recorded->file, bytes);
    } else if (rank_ == 0) {
      // Write-ahead: the release is counted (one durable ledger record with its digest) before
      // it is stored or used; a crash before this line leaves nothing released.
      for (const auto& e : events_of_[i]) {
        accountant_->step(e.mechanism, e.count);
        rdp_shadow_->step(e.mechanism, e.count);
      }
      ReleaseRecord r;
      r.name = release.name();
      r.events = events_of_[i];
      r.subsample = outer_subsample_;
      r.file = RunPaths::release_file(r.name);
      r.digest = blake2b_digest(bytes);
      r.key_fingerprint = secret_fingerprint(batch_secret, "batch");
      r.epsilon = epsilon();
      ledger_->append_release(r);
      release_fault_point("after-release-record", release.name());
      dir->store_release(r.file, bytes);
      release_fault_point("after-release", release.name());
    }
  } else if (rank_ == 0) {
    spdlog::info("privacy: reusing the stored {} release recorded in the ledger", release.name());
  }
  broadcast_text(bytes, comm);
  return release.apply(cfg, bytes, pf, shard, comm, batch_secret);
}

methods::PreRelease PrivacyPlan::release_before_training(const Config& cfg, const partition::PartitionFile& pf,
                                                         const partition::Shard& shard, dist::Communicator& comm,
                                                         const Secret& batch_secret, const RunDirectory* dir,
                                                         const std::optional<Ledger>& ledger, SubgraphEpochs& epochs) {
  methods::PreRelease p;
  if (releases_.empty()) return p;
  std::vector<std::string> summaries;
  for (std::size_t i = 0; i < releases_.size(); ++i) {
    methods::PreRelease one = make_release(i, cfg, pf, shard, comm, batch_secret, dir, ledger);
    summaries.push_back(one.summary);
    // The releases change different things: DP-APPR the examples, the label release the
    // evidence at inference. Their parts are combined, never overwritten.
    if (i == 0) {
      p = std::move(one);
    } else {
      p.occurrence_bound = std::max(p.occurrence_bound, one.occurrence_bound);
      p.removed_examples.insert(p.removed_examples.end(), one.removed_examples.begin(), one.removed_examples.end());
      std::sort(p.removed_examples.begin(), p.removed_examples.end());
      for (auto& [row, f] : one.example_features) p.example_features.emplace(row, std::move(f));
      if (one.in_sample) p.in_sample = std::move(one.in_sample);
      if (one.labels) p.labels = std::move(one.labels);
      if (!one.initial_weights.empty()) p.initial_weights = std::move(one.initial_weights);
    }
  }
  occurrence_ = p.occurrence_bound;
  epochs.restrict_to(p);
  set_steps_noise(epochs);
  make_grid(num_params_, epochs.m());
  if (rank_ == 0) {
    for (const auto& s : summaries) spdlog::info("{}", s);
    if (!steps_)
      spdlog::info("privacy: the release{} spent epsilon {:.4f} of {}; no DP-SGD steps", releases_.size() > 1 ? "s" : "",
                   epsilon(), cfg_.privacy.target_epsilon);
    else
      spdlog::info("privacy: the release{} spent epsilon {:.4f} of {}; steps recalibrated after {}: {} (sigma = {:.4g})",
                 releases_.size() > 1 ? "s" : "", epsilon(), cfg_.privacy.target_epsilon,
                 releases_.size() > 1 ? "them" : "it", mech_.to_string(), sigma_);
  }
  return p;
}

void PrivacyPlan::record_step(std::int64_t step) {
  accountant_->step(mech_);
  rdp_shadow_->step(mech_);
  LedgerEntry line;
  line.step = step;
  line.mechanism = mech_;
  line.epsilon = epsilon_bound();
  ledger_->append(line);  // durable before use
}

bool PrivacyPlan::next_step_exceeds() const {
  return accountant_->would_exceed(cfg_.privacy.target_epsilon, cfg_.privacy.delta, mech_);
}

namespace {

// The largest count (at most `limit`) of further `mech` steps that keeps `acc` within the
// target (bisection: would_exceed is monotone in the count).
std::int64_t steps_within(const privacy::Accountant& acc, const Config& cfg, const privacy::Mechanism& mech,
                          std::int64_t limit) {
  const double eps = cfg.privacy.target_epsilon, delta = cfg.privacy.delta;
  if (!acc.would_exceed(eps, delta, mech, limit)) return limit;
  std::int64_t lo = 0, hi = limit;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (acc.would_exceed(eps, delta, mech, mid) ? hi : lo) = mid;
  }
  return lo;
}

}  // namespace

std::int64_t PrivacyPlan::budget_end(std::int64_t from, std::int64_t max_steps) const {
  if (!private_ || from >= max_steps) return max_steps;
  if (!steps_) return from;
  return from + steps_within(*accountant_, cfg_, mech_, max_steps - from);
}

privacy::Accountant PrivacyPlan::fresh_run_history() const {
  privacy::Accountant acc(kind_, std::vector<double>{}, conversion_);
  if (outer_subsample_) acc.set_subsample(*outer_subsample_);
  for (const auto& e : release_events_) acc.step(e.mechanism, e.count);
  return acc;
}

std::int64_t PrivacyPlan::max_steps() const { return steps_ ? cfg_.train.max_steps : 0; }

std::int64_t PrivacyPlan::planned_steps() const {
  if (!private_) return cfg_.train.max_steps;
  if (!steps_) return 0;
  return steps_within(fresh_run_history(), cfg_, mech_, cfg_.train.max_steps);
}

std::string PrivacyPlan::planned_epsilon_source() const {
  if (!private_) return "none";
  privacy::Accountant acc = fresh_run_history();
  if (const std::int64_t steps = steps_ ? steps_within(acc, cfg_, mech_, cfg_.train.max_steps) : 0; steps > 0)
    acc.step(mech_, steps);
  return acc.epsilon(cfg_.privacy.delta).pld ? "pld" : "rdp";
}

double PrivacyPlan::epsilon() const {
  return private_ && accountant_ ? accountant_->epsilon(cfg_.privacy.delta).epsilon : 0.0;
}

double PrivacyPlan::epsilon_bound() const {
  if (!private_ || !rdp_shadow_) return 0.0;
  const double rdp = rdp_shadow_->epsilon(cfg_.privacy.delta).epsilon;
  // Every step is taken only when the chosen accountant says it stays within the target
  // (next_step_exceeds), so the target bounds the spent epsilon too.
  return kind_ == privacy::AccountantKind::kPld ? std::min(rdp, cfg_.privacy.target_epsilon) : rdp;
}

std::string PrivacyPlan::epsilon_source() const {
  if (!private_ || !accountant_) return "none";
  return accountant_->epsilon(cfg_.privacy.delta).pld ? "pld" : "rdp";
}

double PrivacyPlan::epsilon_order() const {
  return private_ && accountant_ ? accountant_->epsilon(cfg_.privacy.delta).order : 0.0;
}

void PrivacyPlan::record_end(const nlohmann::json& end) {
  if (ledger_) ledger_->append_end(end);
}

std::string PrivacyPlan::describe() const {
  if (!steps_)
    return fmt::format("privacy: {}; no DP-SGD steps (the release makes the model), release scale{} {:.4g}, target "
                       "epsilon {} at delta {}",
                       spec_.accountant(cfg_), release_z_.size() > 1 ? "s" : "", fmt::join(release_z_, ", "),
                       cfg_.privacy.target_epsilon, cfg_.privacy.delta);
  return fmt::format("privacy: {} accountant, population {}, noise multiplier {:.4g} (sigma = {:.4g} for clip {}), "
                     "target epsilon {} at delta {}{}",
                     spec_.accountant(cfg_), mech_.dataset_size, z_, sigma_, cfg_.privacy.clip_norm,
                     cfg_.privacy.target_epsilon, cfg_.privacy.delta,
                     releases_.empty() ? std::string()
                                       : fmt::format(" (provisional: g = 1 until the release; release scale{} {:.4g})",
                                                     releases_.size() > 1 ? "s" : "", fmt::join(release_z_, ", ")));
}

}  // namespace dpgnn::train
