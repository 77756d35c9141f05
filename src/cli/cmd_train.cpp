// `dpgnn train --config X.yaml [--set key=value ...] --out RUN_DIR [--resume]`: one training
// run over all MPI ranks (mpirun -np P dpgnn train ...; a plain start is one rank).
// The config is read and validated before MPI starts, so a malformed config fails with one
// message before any rank does work. `--check` stops right there: it validates a config
// (every key, type and range, and the method's sampler/accountant pair, DESIGN.md 3) without
// MPI and without opening the data files, so a catalogue of configs (configs/) can be checked
// on a machine that holds none of the datasets.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "command.h"
#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/environment.h"
#include "dpgnn/train/config.h"
#include "dpgnn/train/trainer.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/log.h"

namespace dpgnn::cli {
namespace {

// One line saying what was checked and what the run would do; data files are named, not opened.
std::string check_line(const train::Config& c) {
  std::ostringstream s;
  s << "OK " << c.source << ": method " << c.method << ", " << train::method_pairing(c);
  if (train::is_private(c.method_enum())) {
    s << ", target epsilon " << c.privacy.target_epsilon << " at delta " << c.privacy.delta << ", noise multiplier ";
    if (c.privacy.noise_multiplier)
      s << *c.privacy.noise_multiplier;
    else if (c.method == "dpar" && c.dpar.learner == "class_sums")
      s << "calibrated for the class sums (one release, no steps)";
    else if (c.method == "dpar" && c.dpar.learner == "auto")
      s << "calibrated over " << c.train.max_steps << " steps (or for the class sums, when dpar.learner auto takes them)";
    else
      s << "calibrated over " << c.train.max_steps << " steps";
    s << ", clip " << c.privacy.clip_norm;
  }
  s << ", batch ";
  if (c.train.batch_size > 0)
    s << c.train.batch_size;
  else
    s << "auto";
  s << ", data " << c.data.dataset;
  if (!c.data.partition.empty()) s << " + " << c.data.partition;
  s << " (not opened)";
  return s.str();
}

}  // namespace

void add_train_command(CLI::App& root, Registry& registry) {
  struct Options {
    std::string config, out;
    std::vector<std::string> overrides;
    bool resume = false, force = false, dry_run = false, check = false, help_config = false, markdown = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "train",
      "Train a model (run under mpirun/srun for several ranks). Writes config.yaml, ledger.jsonl, "
      "metrics.jsonl, checkpoint.h5, model.h5 and summary.json into --out (docs/outputs.md)");
  app->add_option("--config", opt->config,
                  "YAML experiment config (docs/configs.md); with --resume optional (the run's bound config is used; "
                  "a different one is refused)");
  app->add_option("--set", opt->overrides, "Override a config key: --set train.lr=0.1 (repeatable)");
  app->add_option("--out", opt->out, "Run directory (must be new or empty unless --resume)");
  app->add_flag("--resume", opt->resume,
                "Continue the run in --out from its last checkpoint (dpgnn train --resume --out RUN); the accountant "
                "is rebuilt from its ledger, recorded steps are replayed exactly, stored releases reused; anything "
                "that would change a recorded step is refused (exit 2); a finished run is left as it is");
  app->add_flag("--force", opt->force, "Use a non-empty --out that holds no ledger");
  app->add_flag("--dry-run", opt->dry_run,
                "Load the data, sample, calibrate the noise and print the plan; no training, no files");
  app->add_flag("--check", opt->check,
                "Validate the config (keys, types, ranges, method/sampler/accountant pair) and --set overrides "
                "without MPI and without opening the data files; print one OK line and exit 0 (2 on an error)")
      ->excludes("--resume")
      ->excludes("--dry-run")
      ->excludes("--force");
  app->add_flag("--help-config", opt->help_config, "Print every config key with its default and exit");
  app->add_flag("--markdown", opt->markdown, "With --help-config: print Markdown tables (docs/configs.md)");
  registry.add(app, [opt]() {
    if (opt->help_config) {
      std::cout << train::describe_config_keys(opt->markdown)
                << "\nMethod defaults (replace the ones above for that method; the config file and --set "
                   "replace them):\n"
                << (opt->markdown ? "\n" : "") << train::describe_method_defaults(opt->markdown);
      return 0;
    }
    if (opt->config.empty() && !opt->resume) throw UsageError("dpgnn train: --config is required");
    if (opt->check) {
      // No MPI, no data: a config error is a plain UsageError (exit 2) naming the file and key.
      std::cout << check_line(train::load_config(opt->config, opt->overrides)) << "\n";
      return 0;
    }
    if (opt->out.empty() && !opt->dry_run) throw UsageError("dpgnn train: --out is required (the run directory)");
    train::Config cfg;
    try {
      if (!opt->config.empty()) {
        cfg = train::load_config(opt->config, opt->overrides);
        // The run records where its data are, resolved against this directory, so that
        // `predict --run`, `train --resume` and `privacy --ledger` work from any directory.
        train::resolve_data_paths(cfg);
      } else {
        // --resume --out RUN alone: the config the run is bound to (its ledger header).
        if (!opt->overrides.empty())
          throw UsageError("dpgnn train: --set needs --config (a resumed run keeps its bound config)");
        cfg = train::parse_config(train::bound_config_text(opt->out), (std::filesystem::path(opt->out) / "ledger.jsonl").string(), {});
      }
    } catch (const Error& e) {
      throw CollectiveError(e.what(), e.exit_code(), launcher_rank_is_zero());
    }
    const bool report = launcher_rank_is_zero();
    for (const auto& [key, path] : {std::pair<std::string, std::string>{"data.dataset", cfg.data.dataset},
                                    {"data.partition", cfg.data.partition}})
      if (!path.empty() && !std::filesystem::exists(path))
        throw CollectiveError(ConfigError(cfg.source, key,
                                          "file '" + path +
                                              "' does not exist (to validate the config without its data, run "
                                              "`dpgnn train --check --config " + cfg.source + "`)")
                                  .what(),
                              kExitUsage, report);
    check_gpu_collectives_variable(report);
    restart_with_tuned_malloc();  // once, before MPI (command.h)
    const auto& env = dist::init_environment(nullptr, nullptr);
    set_finalize_handler([] { dist::finalize_environment(); });
    train::TrainOptions to;
    to.out_dir = opt->out;
    to.resume = opt->resume;
    to.force = opt->force;
    to.dry_run = opt->dry_run;
    to.local_ranks = env.local_size;
    {
      const auto comms = dist::Collectives::open(cfg.device != "cpu", train::cuda_device_index(cfg));
      const train::TrainSummary s = train::run_training(cfg, to, comms);
      if (s.stopped_by == "interrupted") {
        dist::finalize_environment();
        return train::interrupted_exit_code(s.signal);
      }
      if (opt->dry_run && env.world_rank == 0)
        std::cout << "dry run: method " << s.method << ", " << s.subgraphs << " subgraphs (accounted), batch "
                  << s.batch_size << ", noise multiplier " << s.noise_multiplier << ", sigma " << s.sigma
                  << ", accountant " << s.accountant
                  << (s.is_private ? ", privacy.accountant " + cfg.privacy.accountant +
                                         (s.epsilon_from != cfg.privacy.accountant
                                              ? " (epsilon by " + s.epsilon_from +
                                                    ": a mechanism of this history has no PLD pair)"
                                              : std::string()) +
                                         ", " + std::to_string(s.steps) +
                                         " steps within epsilon " + fmt::format("{}", s.target_epsilon) +
                                         " (of max_steps " + std::to_string(cfg.train.max_steps) + ")"
                                   : std::string())
                  << ", " << s.ranks << " rank(s)\n";
    }
    dist::finalize_environment();
    return 0;
  });
}

}  // namespace dpgnn::cli
