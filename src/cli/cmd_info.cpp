// `dpgnn info FILE.h5 [--json]`: validates a dataset (or partition) file completely (for a
// partition file also the /partition group against its checksums) and
// prints its statistics. The JSON keys are a contract other tools rely on (docs/cli.md).
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "command.h"
#include "dpgnn/graph/validate.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/util/hdf5.h"

namespace dpgnn::cli {

void add_info_command(CLI::App& root, Registry& registry) {
  struct Options {
    std::string file;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "info", "Validate a dataset file completely and print its statistics");
  app->add_option("file", opt->file, "Dataset (or partition) HDF5 file")->required();
  app->add_flag("--json", opt->json, "Print one JSON object instead of text");
  registry.add(app, [opt]() {
    graph::DatasetStats s;
    const graph::Dataset d = graph::load_and_validate(opt->file, &s);
    // A partition file: its /partition group too (digest, every array against its checksums).
    if (h5::File::open_read(opt->file).exists("/partition")) {
      const auto pf = partition::PartitionFile::open(opt->file);
      pf.new_to_old();
      pf.part_of();
    }
    const auto& m = d.meta;
    nlohmann::json j = {
        {"file", opt->file},
        {"name", m.name},
        {"nodes", s.nodes},
        {"edges", s.edges},
        {"undirected_edges", s.undirected_edges},
        {"features", m.num_features},
        {"classes", m.num_classes},
        {"multilabel", m.multilabel},
        {"train", s.train},
        {"val", s.val},
        {"test", s.test},
        {"self_loops", s.self_loops},
        {"duplicate_edges", s.duplicate_edges},
        {"isolated", s.isolated},
        {"max_degree", s.max_degree},
        {"setting", graph::to_string(m.setting)},
        {"orientation", m.directed ? "directed" : "undirected"},
        {"source", m.source},
        {"checksum", m.checksum},
        {"label_names", m.label_names},
    };
    // The majority-class baseline (single-label data): what any model must beat.
    const auto majority = graph::majority_baseline(d);
    j["majority"] = majority ? nlohmann::json{{"label", majority->label},
                                              {"train_share", majority->train_share},
                                              {"val_accuracy", majority->val_accuracy},
                                              {"test_accuracy", majority->test_accuracy}}
                             : nlohmann::json(nullptr);
    if (opt->json) {
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::cout << m.name << " (" << opt->file << ")\n"
              << "  nodes            " << s.nodes << "\n"
              << "  edges (CSR)      " << s.edges << " (" << s.undirected_edges << " undirected, "
              << s.self_loops << " self-loops, " << s.duplicate_edges << " duplicates)\n"
              << "  isolated nodes   " << s.isolated << ", max degree " << s.max_degree << "\n"
              << "  features         " << m.num_features << "\n"
              << "  classes          " << m.num_classes << (m.multilabel ? " (multi-label)" : "") << "\n"
              << "  split            train " << s.train << ", val " << s.val << ", test " << s.test << "\n"
              << "  setting          " << graph::to_string(m.setting) << ", "
              << (m.directed ? "directed" : "undirected") << "\n"
              << "  checksum         " << m.checksum << " (verified)\n";
    if (majority)
      std::cout << "  majority class   " << majority->label << " (" << fmt::format("{:.1f}", 100 * majority->train_share)
                << "% of the training nodes): accuracy " << fmt::format("{:.4f}", majority->val_accuracy)
                << " on val, " << fmt::format("{:.4f}", majority->test_accuracy) << " on test\n";
    if (!m.source.empty()) std::cout << "  source           " << m.source << "\n";
    return 0;
  });
}

}  // namespace dpgnn::cli
