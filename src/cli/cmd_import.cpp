// `dpgnn import FORMAT [format options] --out FILE.h5`: converts a dataset from the format
// users have (planetoid, npz, musae, ogb, graphsaint, csv) into the dpgnn dataset file.
//
// Every format is read into a graph::import::RawGraph (the pickle/npz formats through the
// Python converter in tools/), and graph::import::write_imported is the one path from
// there to the file: symmetrise, drop self-loops and duplicates (counts printed), draw a
// seeded split where the source has none, validate, write. The command line is a contract
// (issue 2, item 6; docs/importing.md gives every option and the commands for the
// datasets in ../shared/data).
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>

#include "command.h"
#include "dpgnn/graph/import/converter.h"
#include "dpgnn/graph/import/generic_csv.h"
#include "dpgnn/graph/import/musae.h"
#include "dpgnn/graph/import/ogb.h"
#include "dpgnn/graph/import/raw_graph.h"
#include "dpgnn/util/error.h"

namespace dpgnn::cli {

namespace {

namespace gi = graph::import;

// Options every format has.
struct CommonOptions {
  std::string out;
  std::string name;
  std::string setting;  // empty: the format's default
  bool keep_directed = false;
  bool force = false;
  gi::SplitOptions split;
};

CLI::App* add_format(CLI::App* parent, const std::string& format, const std::string& help,
                     const std::shared_ptr<CommonOptions>& c, bool name_option, bool split_options) {
  CLI::App* app = parent->add_subcommand(format, help);
  app->add_option("--out", c->out, "Output dataset file (.h5); never overwritten without --force")->required();
  if (name_option) app->add_option("--name", c->name, "Dataset name stored in the file (default: from the input)");
  app->add_option("--setting", c->setting, "transductive or inductive (default: the format's)")
      ->check(CLI::IsMember({"transductive", "inductive"}));
  app->add_flag("--keep-directed", c->keep_directed,
                "Keep the edges as stored (orientation=directed) instead of symmetrising");
  app->add_flag("--force", c->force, "Overwrite an existing --out file");
  app->add_option("--seed", c->split.seed, "Seed of the random split (formats without a standard split)")
      ->capture_default_str();
  if (split_options) {
    app->add_option("--train-per-class", c->split.train_per_class, "Random split: training nodes per class")
        ->capture_default_str();
    app->add_option("--val-per-class", c->split.val_per_class, "Random split: validation nodes per class")
        ->capture_default_str();
    app->add_option("--train-fraction", c->split.train_fraction,
                    "Random split by fractions of the labelled nodes instead of per-class counts");
    app->add_option("--val-fraction", c->split.val_fraction, "With --train-fraction: the validation fraction");
  }
  return app;
}

// The canonical tail of every import: options applied, then finalize + write.
int finish(gi::RawGraph&& raw, const CommonOptions& c, const std::string& default_name) {
  if (!c.name.empty()) {
    raw.name = c.name;
  } else if (raw.name.empty()) {
    raw.name = default_name;
  }
  if (!c.setting.empty())
    raw.setting = c.setting == "inductive" ? graph::Setting::inductive : graph::Setting::transductive;
  gi::FinalizeOptions fo;
  fo.keep_directed = c.keep_directed;
  fo.split = c.split;
  gi::write_imported(std::move(raw), fo, c.out, c.force);
  return 0;
}

// "facebook_edges.csv" -> "facebook", "cora.npz" -> "cora".
std::string stem_name(const std::string& path, const std::string& strip_suffix = "") {
  std::string s = std::filesystem::path(path).stem().string();
  if (s.size() > 4 && s.compare(s.size() - 4, 4, ".csv") == 0) s.resize(s.size() - 4);  // x.csv.gz
  if (!strip_suffix.empty() && s.size() > strip_suffix.size() &&
      s.compare(s.size() - strip_suffix.size(), strip_suffix.size(), strip_suffix) == 0)
    s.resize(s.size() - strip_suffix.size());
  return s;
}

}  // namespace

void add_import_command(CLI::App& root, Registry& registry) {
  CLI::App* imp = root.add_subcommand(
      "import", "Import a dataset (planetoid, npz, musae, ogb, graphsaint, csv) into a dpgnn dataset file");
  imp->require_subcommand(1);
  imp->footer("Duplicate edges and self-loops are removed and counted; see docs/importing.md.");

  {  // planetoid
    auto c = std::make_shared<CommonOptions>();
    auto dir = std::make_shared<std::string>();
    auto name = std::make_shared<std::string>();
    auto no_features = std::make_shared<bool>(false);
    CLI::App* app = add_format(imp, "planetoid",
                               "Planetoid pickles ind.NAME.{x,y,tx,ty,allx,ally,graph,test.index} with the standard "
                               "public split",
                               c, false, false);
    app->add_option("--dir", *dir, "Folder holding ind.NAME.*")->required();
    app->add_option("--name", *name, "Dataset name, the NAME of ind.NAME.* (cora, citeseer, pubmed)")->required();
    app->add_flag("--no-features", *no_features,
                  "Import structure, labels and split only (F = 0), e.g. when ind.NAME.allx is missing");
    registry.add(app, [c, dir, name, no_features]() {
      gi::check_output_path(c->out, c->force);
      std::vector<std::string> args = {"--dir", *dir, "--name", *name};
      if (*no_features) args.push_back("--no-features");
      return finish(gi::run_converter("planetoid", args), *c, *name);
    });
  }
  {  // npz
    auto c = std::make_shared<CommonOptions>();
    auto file = std::make_shared<std::string>();
    CLI::App* app = add_format(imp, "npz",
                               "npz SparseGraph files (gnn-benchmark, GraphData); a seeded random per-class split "
                               "(default 20 train / 30 val per class, rest test)",
                               c, true, true);
    app->add_option("--file", *file, "The .npz file")->required();
    registry.add(app, [c, file]() {
      gi::check_output_path(c->out, c->force);
      return finish(gi::run_converter("npz", {"--file", *file}), *c, stem_name(*file));
    });
  }
  {  // musae
    auto c = std::make_shared<CommonOptions>();
    auto o = std::make_shared<gi::MusaeOptions>();
    CLI::App* app = add_format(imp, "musae",
                               "MUSAE/FEATHER social graphs: edge CSV, target CSV, feature JSON of id lists; a "
                               "seeded random per-class split",
                               c, true, true);
    app->add_option("--edges", o->edges, "Edge CSV (header + two id columns)")->required();
    app->add_option("--target", o->target, "Target CSV, one row per node")->required();
    app->add_option("--features", o->features,
                    "Feature JSON {\"<id>\": [feature ids]} (optional: without it F = 0)");
    app->add_option("--id-column", o->id_column, "Node id column of the target CSV (twitch: new_id)")
        ->capture_default_str();
    app->add_option("--label-column", o->label_column, "Label column of the target CSV")->required();
    app->add_option("--num-features", o->num_features,
                    "Feature id space (default: max id + 1; twitch countries share 3170)");
    registry.add(app, [c, o]() {
      gi::check_output_path(c->out, c->force);
      return finish(gi::read_musae(*o), *c, stem_name(o->edges, "_edges"));
    });
  }
  {  // ogb
    auto c = std::make_shared<CommonOptions>();
    auto o = std::make_shared<gi::OgbOptions>();
    CLI::App* app = add_format(imp, "ogb",
                               "OGB node-property raw files (raw/edge.csv.gz, raw/node-feat.csv.gz, "
                               "raw/node-label.csv.gz, split/<name>/*.csv.gz)",
                               c, true, true);
    app->add_option("--dir", o->dir, "The unzipped dataset folder (holds raw/ and split/)")->required();
    app->add_option("--split-name", o->split_name, "Subfolder of split/ (default: the only one)");
    registry.add(app, [c, o]() {
      gi::check_output_path(c->out, c->force);
      return finish(gi::read_ogb(*o), *c, "ogb");
    });
  }
  {  // graphsaint
    auto c = std::make_shared<CommonOptions>();
    auto dir = std::make_shared<std::string>();
    CLI::App* app = add_format(imp, "graphsaint",
                               "GraphSAINT folders (adj_full.npz, adj_train.npz, feats.npy, class_map.json, "
                               "role.json); setting inductive",
                               c, true, false);
    app->add_option("--dir", *dir, "The dataset folder")->required();
    registry.add(app, [c, dir]() {
      gi::check_output_path(c->out, c->force);
      return finish(gi::run_converter("graphsaint", {"--dir", *dir}), *c, "graphsaint");
    });
  }
  {  // csv
    auto c = std::make_shared<CommonOptions>();
    auto o = std::make_shared<gi::GenericCsvOptions>();
    auto delimiter = std::make_shared<std::string>(",");
    CLI::App* app = add_format(imp, "csv",
                               "Generic CSV: edge list + labels [+ features] [+ split] (format in "
                               "docs/importing.md)",
                               c, true, true);
    app->add_option("--edges", o->edges, "Edge list CSV with a header")->required();
    app->add_option("--labels", o->labels, "Label CSV: id column + label column")->required();
    app->add_option("--features", o->features, "Feature CSV: id column + one column per feature");
    app->add_option("--split", o->split, "Split CSV: id column + split column (train|val|test)");
    app->add_option("--src-column", o->src_column, "Source column of the edge CSV (default: the first)");
    app->add_option("--dst-column", o->dst_column, "Target column of the edge CSV (default: the second)");
    app->add_option("--id-column", o->id_column, "Node id column of the feature/label/split CSVs")
        ->capture_default_str();
    app->add_option("--label-column", o->label_column, "Label column of the label CSV")->capture_default_str();
    app->add_option("--split-column", o->split_column, "Split column of the split CSV")->capture_default_str();
    app->add_option("--num-nodes", o->num_nodes, "Number of nodes (default: max id + 1 over all files)");
    app->add_option("--delimiter", *delimiter, "Field delimiter: one character, or 'tab'")->capture_default_str();
    registry.add(app, [c, o, delimiter]() {
      gi::check_output_path(c->out, c->force);
      if (*delimiter == "tab" || *delimiter == "\\t") {
        o->delimiter = '\t';
      } else if (delimiter->size() == 1 && *delimiter != "\"" && *delimiter != "\n" && *delimiter != "\r") {
        o->delimiter = (*delimiter)[0];
      } else {
        throw UsageError("--delimiter must be one character (not a quote or line break) or 'tab', got '" +
                         *delimiter + "'");
      }
      return finish(gi::read_generic_csv(*o), *c, stem_name(o->edges));
    });
  }
}

}  // namespace dpgnn::cli
