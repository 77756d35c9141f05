// `dpgnn predict --run RUN_DIR [--dataset D] [--partition P] [--out predictions.h5] [--json]`:
// a trained model over the whole graph (under mpirun like train), per-node logits and
// predicted labels to HDF5, and the metrics on the labelled splits (docs/cli.md).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "command.h"
#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/environment.h"
#include "dpgnn/train/predict.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/log.h"

namespace dpgnn::cli {

void add_predict_command(CLI::App& root, Registry& registry) {
  struct Options {
    train::PredictOptions p;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "predict",
      "Run a trained model (RUN_DIR/model.h5) over the whole graph with full-neighbourhood inference "
      "(under mpirun for several ranks); write per-node logits and predictions, print val/test metrics");
  app->add_option("--run", opt->p.run_dir, "Finished training run directory (config.yaml, model.h5)")->required();
  app->add_option("--dataset", opt->p.dataset, "Dataset file (default: the run's data.dataset)");
  app->add_option("--partition", opt->p.partition,
                  "Partition file (default: the run's data.partition; with --dataset alone: none)");
  app->add_option("--out", opt->p.out, "Predictions HDF5 file: /node_id, /logits, /prediction (docs/cli.md)");
  app->add_flag("--force", opt->p.force, "Replace an existing --out");
  app->add_flag("--json", opt->json, "Print one JSON object with the metrics");
  registry.add(app, [opt]() {
    // Checked before MPI starts: every rank sees the same files, so one message, exit 2.
    for (const char* f : {"config.yaml", "model.h5"}) {
      const std::filesystem::path p = std::filesystem::path(opt->p.run_dir) / f;
      if (!std::filesystem::exists(p))
        throw CollectiveError("dpgnn predict: " + p.string() +
                                  " does not exist (--run must be a finished training run directory)",
                              kExitUsage, launcher_rank_is_zero());
    }
    restart_with_tuned_malloc();  // once, before MPI (command.h)
    const auto& env = dist::init_environment(nullptr, nullptr);
    set_finalize_handler([] { dist::finalize_environment(); });
    {
      const auto comms = dist::Collectives::open(/*on_gpu=*/false);  // prediction runs on the CPU
      const train::PredictResult r = train::run_prediction(opt->p, comms);
      if (env.world_rank == 0) {
        const std::string key = r.multilabel ? "f1_micro" : "accuracy";
        if (opt->json) {
          nlohmann::json j = {{"val_" + key, r.val},     {"test_" + key, r.test}, {"val_nodes", r.val_nodes},
                              {"test_nodes", r.test_nodes}, {"nodes", r.nodes},     {"classes", r.classes}, {"private", r.is_private},
                              {"ranks", comms.size()},     {"out", opt->p.out}};
          std::cout << j.dump() << "\n";
        } else {
          std::cout << "predict: " << r.nodes << " nodes, val " << key << " " << r.val << ", test " << key << " "
                    << r.test << (opt->p.out.empty() ? "" : ", predictions in " + opt->p.out) << "\n";
        }
      }
    }
    dist::finalize_environment();
    return 0;
  });
}

}  // namespace dpgnn::cli
