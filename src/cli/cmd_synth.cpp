// `dpgnn synth`: writes a synthetic dataset drawn from a degree-corrected stochastic block
// model with class-correlated Gaussian features (graph/synth.h; docs/synth.md).
//
//   dpgnn synth --nodes N --avg-degree D --classes C --features F --homophily H --seed S
//               [--inductive] --out FILE.h5
//
// The options are a contract other tools and checks rely on. The output depends on the
// parameters and the seed only, never on --threads. An existing --out is never replaced
// without --force.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>

#include "command.h"
#include "dpgnn/graph/synth.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/system.h"

namespace dpgnn::cli {

void add_synth_command(CLI::App& root, Registry& registry) {
  struct Options {
    graph::SynthParams params;
    std::string out;
    bool force = false;
    int threads = 0;
    std::int64_t seed = 0;  // signed, so that a negative seed is an error rather than a wrap-around
  };
  auto opt = std::make_shared<Options>();
  auto& p = opt->params;
  CLI::App* app = root.add_subcommand(
      "synth",
      "Generate a synthetic dataset: a degree-corrected stochastic block model (one block per class) "
      "with class-correlated Gaussian features and a seeded random train/val/test split");
  app->add_option("--nodes", p.nodes, "Number of nodes N (>= 1)")->required();
  app->add_option("--avg-degree", p.avg_degree,
                  "Average degree D: N*D/2 distinct undirected edges (0 <= D <= N-1)")
      ->required();
  app->add_option("--classes", p.classes, "Number of classes C (1 <= C <= N), balanced sizes")->required();
  app->add_option("--features", p.features, "Feature dimension F (>= 0)")->required();
  app->add_option("--homophily", p.homophily, "Fraction H of edges joining nodes of the same class, in [0, 1]")
      ->required();
  app->add_option("--seed", opt->seed, "Random seed (>= 0): the same arguments give the same content")
      ->capture_default_str();
  app->add_flag("--inductive", p.inductive,
                "Mark the dataset inductive (training uses only training nodes and the edges among them)");
  app->add_option("--out", opt->out, "Output dataset file (HDF5)")->required();
  app->add_option("--train-frac", p.train_frac, "Fraction of nodes in the training split")->capture_default_str();
  app->add_option("--val-frac", p.val_frac, "Fraction of nodes in the validation split (test gets the rest)")
      ->capture_default_str();
  app->add_option("--degree-exponent", p.degree_exponent,
                  "Exponent gamma > 1 of the power-law degree propensities (pdf ~ x^-gamma)")
      ->capture_default_str();
  app->add_option("--max-degree", p.max_degree,
                  "Cap on a node's expected degree (0 = automatic: min(sqrt(N*D), what its blocks can hold))")
      ->capture_default_str();
  app->add_option("--feature-signal", p.feature_signal,
                  "Norm of each class mean against unit Gaussian noise per dimension (0 = features carry no "
                  "class information)")
      ->capture_default_str();
  app->add_option("--name", p.name, "Dataset name stored in the file")->capture_default_str();
  app->add_flag("--force", opt->force, "Overwrite --out if it exists");
  app->add_option("--threads", opt->threads, "Worker threads (0 = all available cores); never changes the output")
      ->capture_default_str();

  registry.add(app, [opt]() {
    auto params = opt->params;
    if (opt->threads < 0) throw UsageError("synth: --threads must be >= 0 (0 = all cores), got " +
                                           std::to_string(opt->threads));
    params.threads = opt->threads == 0 ? available_cores() : opt->threads;
    if (opt->seed < 0) throw UsageError("synth: --seed must be >= 0, got " + std::to_string(opt->seed));
    params.seed = static_cast<std::uint64_t>(opt->seed);
    graph::validate_synth_params(params);
    std::error_code ec;
    if (std::filesystem::exists(opt->out, ec) && !opt->force)
      throw UsageError("synth: --out " + opt->out + " already exists; pass --force to overwrite it");
    if (std::filesystem::is_directory(opt->out, ec))
      throw UsageError("synth: --out " + opt->out + " is a directory, not a file");
    spdlog::info("synth: {} nodes, average degree {}, {} classes, {} features, homophily {}, seed {}, {} thread(s)",
                 params.nodes, params.avg_degree, params.classes, params.features, params.homophily, params.seed,
                 params.threads);
    graph::write_synthetic_dataset(params, opt->out);
    return 0;
  });
}

}  // namespace dpgnn::cli
