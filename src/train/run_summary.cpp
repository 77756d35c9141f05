#include "run_summary.h"

#include <fmt/ranges.h>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <ctime>
#include <filesystem>

#include "checkpoint.h"
#include "collective_text.h"
#include "fault_points.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/version.h"
#include "privacy_plan.h"
#include "subgraph_epochs.h"

namespace dpgnn::train {
namespace fs = std::filesystem;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

RunProvenance RunProvenance::now(dist::Communicator& comm, c10::Device device) {
  RunProvenance p;
  p.version = kVersion;
  p.commit = kCommit;
  p.device = device.is_cpu() ? "cpu" : "cuda";
  p.started = utc_now();
  p.hosts = gather_hostnames(comm);
  return p;
}

nlohmann::json RunProvenance::to_json() const {
  return {{"version", version}, {"commit", commit}, {"device", device}, {"started", started}, {"hosts", hosts}};
}

RunOutputs::RunOutputs(const Config& cfg, const RunPaths& paths, const partition::PartitionFile& pf, bool multilabel,
                       dist::Communicator& comm)
    : cfg_(cfg),
      paths_(paths),
      config_text_(dump_config(cfg)),
      dataset_checksum_(pf.dataset_checksum()),
      partition_checksum_(pf.meta().checksum),
      multilabel_(multilabel),
      comm_(comm),
      world_(comm.size()),
      rank_(comm.rank()) {
  if (rank_ != 0) return;
  metrics_ = std::make_unique<std::ofstream>(paths_.metrics(), std::ios::app);
  if (!*metrics_) throw IoError(paths_.metrics().string() + ": cannot open for appending");
  // metrics.csv: every key a line of metrics.jsonl can hold, one column each (empty when a
  // line lacks it), for spreadsheets and pandas.read_csv; the header once, a resume appends.
  const std::string key = multilabel_ ? "f1_micro" : "accuracy";
  csv_columns_ = {"step", "epsilon", "steps_per_second", "loss", "val_" + key, "test_" + key};
  const bool fresh = !std::filesystem::exists(paths_.metrics_csv()) || std::filesystem::file_size(paths_.metrics_csv()) == 0;
  metrics_csv_ = std::make_unique<std::ofstream>(paths_.metrics_csv(), std::ios::app);
  if (!*metrics_csv_) throw IoError(paths_.metrics_csv().string() + ": cannot open for appending");
  if (fresh) *metrics_csv_ << fmt::format("{}\n", fmt::join(csv_columns_, ","));
}

void RunOutputs::metrics(const nlohmann::json& line) {
  if (!metrics_) return;
  *metrics_ << line.dump() << "\n";
  metrics_->flush();
  std::string row;
  for (std::size_t i = 0; i < csv_columns_.size(); ++i) {
    if (i > 0) row += ',';
    if (line.contains(csv_columns_[i])) row += line.at(csv_columns_[i]).dump();  // numbers: shortest round trip
  }
  *metrics_csv_ << row << "\n";
  metrics_csv_->flush();
}

void RunOutputs::evaluate(std::int64_t completed, ModelState& state, Evaluator& evaluator, const PrivacyPlan& plan) {
  const auto start = std::chrono::steady_clock::now();
  state.with_average([&] { last_eval_ = evaluator.evaluate(state.net); });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  consider_for_selection(completed, state);
  if (rank_ != 0) return;
  const std::string key = multilabel_ ? "f1_micro" : "accuracy";
  metrics({{"step", completed}, {"val_" + key, last_eval_.val}, {"test_" + key, last_eval_.test},
           {"epsilon", plan.epsilon_bound()}});
  spdlog::info("step {}: val {} {:.4f}, test {} {:.4f}{} (evaluation {:.2f} s)", completed, key, last_eval_.val, key,
               last_eval_.test, plan.is_private() ? fmt::format(", epsilon {:.4f}", plan.epsilon_bound()) : "", secs);
}

void RunOutputs::consider_for_selection(std::int64_t completed, ModelState& state) {
  // Every rank holds the same all-reduced metrics, so every rank keeps the same evaluation.
  if (cfg_.train.model_selection != "best_val" || (best_step_ >= 0 && !(last_eval_.val > best_eval_.val))) return;
  best_step_ = completed;
  best_eval_ = last_eval_;
  best_parameters_ = state.ema.defined() ? state.ema.clone() : state.net.flatten();  // what was evaluated
}

void RunOutputs::restore_selected(ModelState& state) {
  if (best_step_ < 0) return;
  c10::NoGradGuard no_grad;
  if (state.ema.defined()) {
    state.ema.copy_(best_parameters_);  // the model saved is the average (with_average)
  } else {
    state.net.unflatten(best_parameters_);
  }
  last_eval_ = best_eval_;
}

void RunOutputs::checkpoint(std::int64_t completed, const ModelState& state) {
  if (rank_ != 0) return;
  const CheckpointMeta cm{completed, world_, config_text_, dataset_checksum_, partition_checksum_};
  write_checkpoint(paths_.checkpoint().string(), cm, state.net, *state.optimizer, state.ema);
  fault_point("after-checkpoint-" + std::to_string(completed));
}

TrainSummary RunOutputs::interrupted(const LoopResult& loop, const ModelState& state) {
  checkpoint(loop.step, state);
  if (rank_ == 0)
    spdlog::warn("interrupted at step {} (signal {}); resume with: dpgnn train --resume --out {}", loop.step,
                 loop.signal, paths_.dir.string());
  TrainSummary s;
  s.method = cfg_.method;
  s.steps = loop.step;
  s.ranks = world_;
  s.stopped_by = "interrupted";
  s.signal = loop.signal;
  return s;
}

TrainSummary RunOutputs::finish(const LoopResult& loop, ModelState& state, Evaluator& evaluator, PrivacyPlan& plan,
                                const SubgraphEpochs& epochs, const RunProvenance& provenance,
                                std::chrono::steady_clock::time_point t_start) {
  evaluate(loop.step, state, evaluator, plan);
  checkpoint(loop.step, state);  // until the end record is written, a crash resumes from here
  // train.model_selection best_val: the saved model and the summary's metrics are the best
  // evaluation's (the checkpoint above keeps the last state, which a resume continues from).
  restore_selected(state);
  if (rank_ == 0 && best_step_ >= 0)
    spdlog::info("model selection: keeping the model of step {} (val {} {:.4f}, the best of the evaluations{})",
                 best_step_, multilabel_ ? "f1_micro" : "accuracy", best_eval_.val,
                 best_step_ == loop.step ? ": the last" : "");
  const bool priv = plan.is_private();
  TrainSummary s;
  s.method = cfg_.method;
  s.delta = cfg_.privacy.delta;
  s.target_epsilon = cfg_.privacy.target_epsilon;
  s.noise_multiplier = plan.noise_multiplier();
  s.sigma = plan.sigma();
  s.steps = loop.step;
  s.ranks = world_;
  s.batch_size = epochs.m();
  s.subgraphs = priv ? plan.mechanism().dataset_size : epochs.M();
  s.accountant = accountant_name(cfg_.method_enum(), cfg_.privacy.worst_case);
  s.multilabel = multilabel_;
  s.val_metric = last_eval_.val;
  s.test_metric = last_eval_.test;
  s.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  s.steps_per_second = loop.seconds > 0 ? static_cast<double>(loop.steps_this_run) / loop.seconds : 0.0;
  s.stopped_by = loop.stopped_by;
  s.is_private = run_is_private(cfg_);
  if (rank_ == 0) {
    if (priv) s.epsilon = plan.epsilon();
    nlohmann::json prov = provenance.to_json();
    prov["ended"] = utc_now();
    prov["private"] = s.is_private;
    state.with_average([&] { write_model_file(paths_.model().string(), state.net, config_text_, prov.dump()); });
    const std::string key = s.multilabel ? "f1_micro" : "accuracy";
    const bool release_loss = !priv || cfg_.train.log_train_loss;
    // The fields below computed from private data without noise (docs/privacy.md section 6).
    std::vector<std::string> outside = {"test_" + key, "val_" + key, "wall_seconds", "steps_per_second"};
    if (best_step_ >= 0) outside.push_back("selected_step");  // chosen on the validation labels
    nlohmann::json j = {{"method", s.method},
                        {"epsilon", s.epsilon},
                        {"delta", s.delta},
                        {"target_epsilon", s.target_epsilon},
                        {"noise_multiplier", s.noise_multiplier},
                        {"sigma", s.sigma},
                        {"clip_norm", cfg_.privacy.clip_norm},
                        {"order", plan.epsilon_order()},
                        {"conversion", cfg_.privacy.conversion},
                        {"steps", s.steps},
                        {"stopped_by", s.stopped_by},
                        {"ranks", s.ranks},
                        {"batch_size", s.batch_size},
                        {"subgraphs", s.subgraphs},
                        {"sampling_rate", static_cast<double>(s.batch_size) /
                                              static_cast<double>(std::max<std::int64_t>(1, s.subgraphs))},
                        {"accountant", s.accountant},
                        {"privacy_accountant", priv ? cfg_.privacy.accountant : "none"},
                        {"epsilon_from", plan.epsilon_source()},
                        {"test_" + key, s.test_metric},
                        {"val_" + key, s.val_metric},
                        {"wall_seconds", s.wall_seconds},
                        {"steps_per_second", s.steps_per_second},
                        {"dataset", cfg_.data.dataset},
                        {"partition", cfg_.data.partition},
                        {"seed", cfg_.train.seed},
                        {"noise_seed_pinned", cfg_.privacy.noise_seed.has_value()},
                        {"private", s.is_private},
                        {"not_private_because", reasons_not_private(cfg_)},
                        {"train_loss_released", release_loss},
                        {"provenance", prov}};
    if (!priv) j["epsilon"] = nullptr;
    // train.model_selection best_val: the step whose model (and metrics above) the run kept.
    if (best_step_ >= 0) j["selected_step"] = best_step_;
    // The inference power-iteration steps of the final evaluation (chosen on the released
    // labels when there are any and dpar.choose_steps), whether the outputs were centred and
    // whether the propagated outputs were offset back to the model's class shares.
    if (evaluator.last_steps() > 0 || evaluator.centers_outputs()) {
      j["propagation_steps"] = evaluator.last_steps();
      j["centered_outputs"] = evaluator.centers_outputs();
      j["kept_class_shares"] = evaluator.keeps_class_shares() && evaluator.last_steps() > 0;
    }
    if (!plan.releases().empty()) {
      // "releases": every pre-training release in order; "release": the first (DPAR's DP-APPR).
      nlohmann::json all = nlohmann::json::array();
      for (std::size_t i = 0; i < plan.releases().size(); ++i) {
        const auto* r = plan.releases()[i];
        nlohmann::json events = nlohmann::json::array();
        for (const auto& e : plan.events_of(i)) events.push_back(privacy::Accountant::event_line(e.mechanism, e.count));
        all.push_back({{"name", r->name()}, {"events", events}, {"scale", plan.release_scale(i)},
                       {"fraction_of_target", r->budget_fraction(cfg_)}, {"file", RunPaths::release_file(r->name())}});
      }
      j["release"] = all[0];
      j["releases"] = all;
      if (evaluator.steps_were_chosen()) outside.push_back("propagation_steps");
      j["occurrence_bound"] = plan.occurrence_bound();
      if (const auto& sub = plan.outer_subsample())
        j["graph_sample"] = {{"training_nodes", sub->population}, {"sampled", sub->sample}, {"rate", sub->rate()}};
    }
    if (priv) j["noise_std_effective"] = plan.grid().sigma_effective;
    j["outside_guarantee"] = outside;
    write_text_file(paths_.summary(), j.dump(2) + "\n");
    // The end record: from here a resume says the run is finished and does nothing.
    // (no time in it: two pinned runs of one config write the same ledger; summary.json has the times)
    plan.record_end({{"steps", s.steps}, {"stopped_by", s.stopped_by}, {"epsilon", s.epsilon}});
    if (priv) remove_secret_files(paths_.dir);  // nothing left to replay
    if (!cfg_.train.keep_checkpoint) fs::remove(paths_.checkpoint());
    spdlog::info("done: {} steps (stopped by {}), test {} {:.4f}{}, private: {}, {:.1f} s ({:.2f} steps/s); results in {}",
                 s.steps, s.stopped_by, key, s.test_metric,
                 priv ? fmt::format(", epsilon {:.4f} (delta {})", s.epsilon, s.delta) : "",
                 s.is_private ? "true" : "false", s.wall_seconds, s.steps_per_second, paths_.dir.string());
  }
  comm_.broadcast(&s.epsilon, 1, 0);
  return s;
}

TrainSummary dry_run_summary(const Config& cfg, const methods::MethodSpec& spec, const PrivacyPlan& plan,
                             const SubgraphEpochs& epochs, int world) {
  TrainSummary s;
  s.method = cfg.method;
  s.noise_multiplier = plan.noise_multiplier();
  s.sigma = plan.sigma();
  s.steps = plan.planned_steps();  // within the target at this noise (max_steps if it is not the limit)
  s.target_epsilon = cfg.privacy.target_epsilon;
  s.batch_size = epochs.m();
  s.subgraphs = plan.is_private() ? plan.mechanism().dataset_size : epochs.M();
  s.ranks = world;
  s.accountant = spec.is_private() ? spec.accountant(cfg) : "none";
  s.epsilon_from = plan.planned_epsilon_source();
  s.is_private = run_is_private(cfg);
  return s;
}

TrainSummary finished_run_summary(const Config& cfg, const RunPaths& paths, int world, dist::Communicator& comm) {
  TrainSummary s;
  s.method = cfg.method;
  s.ranks = world;
  s.already_finished = true;
  s.is_private = run_is_private(cfg);
  double facts[2] = {0.0, 0.0};
  if (comm.rank() == 0 && fs::exists(paths.summary())) {
    const auto j = nlohmann::json::parse(read_text_file(paths.summary()), nullptr, false);
    if (!j.is_discarded()) {
      if (j.contains("epsilon") && j.at("epsilon").is_number()) facts[0] = j.at("epsilon").get<double>();
      if (j.contains("steps") && j.at("steps").is_number()) facts[1] = j.at("steps").get<double>();
      s.stopped_by = j.value("stopped_by", std::string());
    }
  }
  comm.broadcast(facts, 2, 0);
  s.epsilon = facts[0];
  s.steps = static_cast<std::int64_t>(facts[1]);
  return s;
}

}  // namespace dpgnn::train
