// `dpgnn audit --config X.yaml --out DIR [--canaries N] [--json]`: trains once with N
// canaries (each included with a secret fair coin) through the ordinary training path and
// turns guesses about the canaries into an empirical lower bound on epsilon (Steinke, Nasr &
// Jagielski 2023; include/dpgnn/train/audit.h, docs/audit.md). Runs under mpirun like train.
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "command.h"
#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/environment.h"
#include "dpgnn/train/audit.h"
#include "dpgnn/train/config.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/log.h"

namespace dpgnn::cli {

void add_audit_command(CLI::App& root, Registry& registry) {
  struct Options {
    std::string config, out;
    std::vector<std::string> overrides;
    std::int64_t canaries = 4000;
    double confidence = 0.95;
    bool json = false, keep_data = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "audit",
      "Empirical lower bound on epsilon from one training run with canaries (Steinke, Nasr & Jagielski "
      "2023); run under mpirun like train. Writes run/, canaries.csv and audit.json into --out (data/, the dataset with canaries, is removed after scoring unless --keep-data) "
      "(docs/audit.md)");
  app->add_option("--config", opt->config, "YAML experiment config (docs/configs.md)")->required();
  app->add_option("--set", opt->overrides, "Override a config key: --set train.lr=0.1 (repeatable)");
  app->add_option("--out", opt->out, "Audit directory (must be new or empty)")->required();
  app->add_option("--canaries", opt->canaries, "Number of canaries N, each included with probability 1/2")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{1} << 20));
  app->add_option("--confidence", opt->confidence, "Confidence of the lower bound")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.999999));
  app->add_flag("--keep-data", opt->keep_data,
                "Keep data/ (the dataset with its canaries and its partition; removed after scoring otherwise)");
  app->add_flag("--json", opt->json, "Print one JSON object (epsilon, epsilon_lower_bound, ...) instead of text");
  registry.add(app, [opt]() {
    const bool report = launcher_rank_is_zero();
    train::Config cfg;
    try {
      cfg = train::load_config(opt->config, opt->overrides);
    } catch (const Error& e) {
      throw CollectiveError(e.what(), e.exit_code(), report);
    }
    for (const auto& [key, path] : {std::pair<std::string, std::string>{"data.dataset", cfg.data.dataset},
                                    {"data.partition", cfg.data.partition}})
      if (!path.empty() && !std::filesystem::exists(path))
        throw CollectiveError(ConfigError(cfg.source, key, "file '" + path + "' does not exist").what(), kExitUsage,
                              report);
    check_gpu_collectives_variable(report);
    restart_with_tuned_malloc();  // once, before MPI (command.h)
    const auto& env = dist::init_environment(nullptr, nullptr);
    set_finalize_handler([] { dist::finalize_environment(); });
    train::AuditOptions ao;
    ao.out_dir = opt->out;
    ao.canaries = opt->canaries;
    ao.confidence = opt->confidence;
    ao.keep_data = opt->keep_data;
    ao.progress = !opt->json;
    ao.local_ranks = env.local_size;
    {
      const auto comms = dist::Collectives::open(cfg.device != "cpu", train::cuda_device_index(cfg));
      const train::AuditResult r = train::run_audit(cfg, ao, comms);
      if (env.world_rank == 0) {
        if (opt->json) {
          std::cout << train::audit_json(r).dump() << "\n";
        } else {
          std::cout << "method " << r.run.method << ": claimed epsilon ";
          if (r.accounted)
            std::cout << r.epsilon << " (delta " << r.delta << ")";
          else
            std::cout << "none (non-private)";
          std::cout << "\nempirical lower bound " << r.epsilon_lower_bound << " at " << r.confidence * 100
                    << "% confidence\n"
                    << r.canaries << " canaries (" << r.included << " included), " << r.guesses << " guesses ("
                    << r.positive_guesses << " included, " << r.guesses - r.positive_guesses << " excluded), "
                    << r.correct << " correct; best of " << r.candidates << " guess counts (union bound)\n"
                    << "audited run trained with " << r.optimizer << " (docs/audit.md)\n";
          if (r.accounted && r.epsilon_lower_bound > r.epsilon)
            std::cout << "THE LOWER BOUND EXCEEDS THE CLAIMED EPSILON: the privacy guarantee is broken (a bug)\n";
        }
      }
    }
    dist::finalize_environment();
    return 0;
  });
}

}  // namespace dpgnn::cli
