// RawGraph -> graph::Dataset -> file: the one canonical import path
// (see include/dpgnn/graph/import/raw_graph.h).
#include "dpgnn/graph/import/raw_graph.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "dpgnn/graph/graph_builder.h"
#include "dpgnn/graph/validate.h"
#include "dpgnn/util/error.h"

namespace dpgnn::graph::import {

namespace {

void check_shapes(const RawGraph& r, const std::string& ctx) {
  const auto n = static_cast<std::size_t>(r.num_nodes);
  auto fail = [&](const std::string& what) { throw DataError(ctx, "", what); };
  if (r.num_nodes <= 0) fail("the graph has no nodes");
  if (r.src.size() != r.dst.size()) fail("edge source and target lists differ in length");
  if (r.num_features < 0) fail("negative feature dimension");
  if (r.features.size() != n * static_cast<std::size_t>(r.num_features))
    fail("feature matrix has " + std::to_string(r.features.size()) + " values, expected " +
         std::to_string(r.num_nodes) + " x " + std::to_string(r.num_features));
  if (r.num_classes <= 0) fail("no classes (no labels were read)");
  if (r.multilabel) {
    if (r.label_matrix.size() != n * static_cast<std::size_t>(r.num_classes))
      fail("multi-hot label matrix has " + std::to_string(r.label_matrix.size()) + " values, expected " +
           std::to_string(r.num_nodes) + " x " + std::to_string(r.num_classes));
  } else if (r.labels.size() != n) {
    fail("there are " + std::to_string(r.labels.size()) + " labels for " + std::to_string(r.num_nodes) + " nodes");
  }
  if (!r.label_names.empty() && static_cast<std::int64_t>(r.label_names.size()) != r.num_classes)
    fail(std::to_string(r.label_names.size()) + " label names for " + std::to_string(r.num_classes) + " classes");
  if (r.has_split && (r.train_mask.size() != n || r.val_mask.size() != n || r.test_mask.size() != n))
    fail("split masks do not have one entry per node");
}

}  // namespace

void check_output_path(const std::string& out, bool force) {
  if (out.empty()) throw UsageError("--out: an output file is required");
  std::error_code ec;
  if (std::filesystem::exists(out, ec) && !force)
    throw UsageError("output file '" + out + "' already exists: pass --force to overwrite it");
  const auto parent = std::filesystem::path(out).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    throw IoError("cannot write '" + out + "': directory '" + parent.string() + "' does not exist");
}

Dataset finalize(RawGraph&& raw, const FinalizeOptions& options, const std::string& context) {
  check_shapes(raw, context);
  Dataset d;
  d.meta.name = raw.name;
  d.meta.source = raw.source;
  d.meta.setting = raw.setting;
  d.meta.directed = options.keep_directed;
  d.meta.multilabel = raw.multilabel;
  d.meta.num_nodes = raw.num_nodes;
  d.meta.num_features = raw.num_features;
  d.meta.num_classes = raw.num_classes;
  d.meta.label_names = raw.label_names;

  // Two passes so that the printed counts mean what users expect: first the records as
  // stored (exact repeats of (u, v) and self-loops, as in shared/data/README.md), then the
  // symmetrisation (edges whose reverse was also stored are not added twice).
  BuildOptions as_stored;
  as_stored.symmetrize = false;
  BuildReport rep;
  CsrGraph directed = build_csr(raw.num_nodes, raw.src, raw.dst, as_stored, &rep, context);
  raw.src = {};
  raw.dst = {};
  spdlog::info("{}: {} edge records over {} nodes: removed {} duplicate edge entries and {} self-loops",
               raw.name.empty() ? context : raw.name,
               rep.input_edges, raw.num_nodes, rep.duplicates_removed, rep.self_loops_removed);
  if (options.keep_directed) {
    d.graph = std::move(directed);
    spdlog::info("--keep-directed: {} directed edges kept as stored (orientation=directed)", d.graph.num_edges());
  } else {
    BuildReport sym;
    d.graph = rebuild_csr(directed, BuildOptions{}, &sym);
    spdlog::info("symmetrised: {} of {} stored edges already had their reverse stored -> {} CSR entries = {} "
                 "undirected edges",
                 sym.duplicates_removed, sym.input_edges, sym.output_entries, sym.output_entries / 2);
  }

  d.features = std::move(raw.features);
  if (raw.multilabel)
    d.label_matrix = std::move(raw.label_matrix);
  else
    d.labels = std::move(raw.labels);

  if (raw.has_split) {
    d.train_mask = std::move(raw.train_mask);
    d.val_mask = std::move(raw.val_mask);
    d.test_mask = std::move(raw.test_mask);
  } else {
    SplitMasks m;
    if (raw.multilabel) {
      std::vector<std::uint8_t> labelled(static_cast<std::size_t>(raw.num_nodes), 1);
      m = random_fraction_split(labelled, options.split);
    } else {
      m = random_split(d.labels, raw.num_classes, options.split);
    }
    d.train_mask = std::move(m.train);
    d.val_mask = std::move(m.val);
    d.test_mask = std::move(m.test);
  }
  validate_content(d, context);
  return d;
}

std::string write_imported(RawGraph&& raw, const FinalizeOptions& options, const std::string& out, bool force) {
  check_output_path(out, force);
  const std::string context = raw.source.empty() ? raw.name : raw.source;
  Dataset d = finalize(std::move(raw), options, context);
  const std::string sum = write_dataset(d, out);
  std::int64_t train = 0, val = 0, test = 0;
  for (std::size_t i = 0; i < d.train_mask.size(); ++i) {
    train += d.train_mask[i];
    val += d.val_mask[i];
    test += d.test_mask[i];
  }
  spdlog::info("wrote {}: {} nodes, {} CSR entries, {} features, {} classes{}, split {}/{}/{} (checksum {})", out,
               d.meta.num_nodes, d.graph.num_edges(), d.meta.num_features, d.meta.num_classes,
               d.meta.multilabel ? " (multi-label)" : "", train, val, test, sum);
  return sum;
}

}  // namespace dpgnn::graph::import
