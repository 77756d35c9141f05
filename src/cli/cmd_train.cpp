// `dpgnn train --config X.yaml [--set key=value ...] --out RUN_DIR [--resume]`: one training
// run over all MPI ranks (mpirun -np P dpgnn train ...; a plain start is one rank).
// The config is read and validated before MPI starts, so a malformed config fails with one
// message before any rank does work.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "command.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/dist/environment.h"
#include "dpgnn/train/config.h"
#include "dpgnn/train/trainer.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/log.h"

namespace dpgnn::cli {
namespace {

// The launcher's rank before MPI is up, to print a config error once.
bool launcher_rank_is_zero() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return std::string(v) == "0";
  }
  return true;
}

}  // namespace

void add_train_command(CLI::App& root, Registry& registry) {
  struct Options {
    std::string config, out;
    std::vector<std::string> overrides;
    bool resume = false, force = false, dry_run = false, help_config = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "train",
      "Train a model (run under mpirun/srun for several ranks). Writes config.yaml, ledger.jsonl, "
      "metrics.jsonl, checkpoint.h5, model.h5 and summary.json into --out (docs/outputs.md)");
  app->add_option("--config", opt->config, "YAML experiment config (docs/configs.md)");
  app->add_option("--set", opt->overrides, "Override a config key: --set train.lr=0.1 (repeatable)");
  app->add_option("--out", opt->out, "Run directory (must be new or empty unless --resume)");
  app->add_flag("--resume", opt->resume,
                "Continue the run in --out from its last checkpoint; the accountant is rebuilt from its ledger");
  app->add_flag("--force", opt->force, "Use a non-empty --out that holds no ledger");
  app->add_flag("--dry-run", opt->dry_run,
                "Load the data, sample, calibrate the noise and print the plan; no training, no files");
  app->add_flag("--help-config", opt->help_config, "Print every config key with its default and exit");
  registry.add(app, [opt]() {
    if (opt->help_config) {
      std::cout << train::describe_config_keys();
      return 0;
    }
    if (opt->config.empty()) throw UsageError("dpgnn train: --config is required");
    if (opt->out.empty() && !opt->dry_run) throw UsageError("dpgnn train: --out is required (the run directory)");
    train::Config cfg;
    try {
      cfg = train::load_config(opt->config, opt->overrides);
    } catch (const Error& e) {
      throw CollectiveError(e.what(), e.exit_code(), launcher_rank_is_zero());
    }
    const bool report = launcher_rank_is_zero();
    for (const auto& [key, path] : {std::pair<std::string, std::string>{"data.dataset", cfg.data.dataset},
                                    {"data.partition", cfg.data.partition}})
      if (!path.empty() && !std::filesystem::exists(path))
        throw CollectiveError(ConfigError(cfg.source, key, "file '" + path + "' does not exist").what(), kExitUsage,
                              report);
    const auto& env = dist::init_environment(nullptr, nullptr);
    set_finalize_handler([] { dist::finalize_environment(); });
    train::TrainOptions to;
    to.out_dir = opt->out;
    to.resume = opt->resume;
    to.force = opt->force;
    to.dry_run = opt->dry_run;
    to.local_ranks = env.local_size;
    to.local_rank = env.local_rank;
    {
      auto comm = dist::make_communicator(cfg.device == "cpu" ? dist::BufferLocation::host
                                                              : dist::BufferLocation::cuda);
      const train::TrainSummary s = train::run_training(cfg, to, *comm);
      if (opt->dry_run && env.world_rank == 0)
        std::cout << "dry run: method " << s.method << ", " << s.subgraphs << " subgraphs (accounted), batch "
                  << s.batch_size << ", noise multiplier " << s.noise_multiplier << ", sigma " << s.sigma
                  << ", accountant " << s.accountant << ", " << s.ranks << " rank(s)\n";
    }
    dist::finalize_environment();
    return 0;
  });
}

}  // namespace dpgnn::cli
