// `dpgnn sample`: runs a sampler over a dataset (one part) or over every part of a
// partition, checks the result with sampling/verify.h, and writes the subgraph set in
// DATASET ids for inspection and plotting (docs/sampling.md describes the file):
//
//   /roots     int64 [M]      root of subgraph i
//   /node_ptr  int64 [M+1]    subgraph i has nodes[node_ptr[i]:node_ptr[i+1]], root first
//   /nodes     int64 [.]
//   /edge_ptr  int64 [M+1]    subgraph i has edges[edge_ptr[i]:edge_ptr[i+1]]
//   /edges     int64 [E, 2]   each undirected edge once
//   /part_ptr  int64 [P+1]    part p's subgraphs are [part_ptr[p], part_ptr[p+1]) (the global ids)
//   attributes: format, sampler, its parameters, seed, epoch, max_subgraph_size, ...
//
// Each part's training graph is built as the trainer builds it (DESIGN.md / issue 4):
// the part's nodes in their partition order (local id i = partition id offset + i) with
// the edges inside the part, restricted to the training nodes for inductive datasets.
// The partition file is read here through partition::PartitionFile (its new_to_old,
// part_offsets and dataset_checksum, checked against its checksums), so sampling/ does not
// depend on partition/.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>

#include "command.h"
#include "dpgnn/graph/dataset.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/sampling/global_ids.h"
#include "dpgnn/sampling/sampler.h"
#include "dpgnn/sampling/verify.h"
#include "dpgnn/train/config.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"

namespace dpgnn::cli {
namespace {

// The sampler's defaults are training's (train::Config), so that `dpgnn sample` shows the
// subgraphs a run with the same keys would train on.
struct SampleOptions {
  std::string dataset, partition, out, sampler = "drw", edges = train::Config{}.sampler.edges,
                                       degree_bound = train::Config{}.sampler.degree_bound;
  std::int64_t walk_length = train::Config{}.sampler.walk_length, restarts = train::Config{}.sampler.restarts,
               max_degree = train::Config{}.sampler.max_degree, layers = train::Config{}.model.layers,
               splits = train::Config{}.sampler.splits, walkers = 64;
  std::uint64_t seed = 0, epoch = 0;
  bool force = false;
};

// One part's training graph in local ids, and the dataset id of every local node.
struct PartGraph {
  graph::CsrGraph graph;
  std::vector<std::uint8_t> train;
  std::vector<std::int64_t> dataset_id;  // [n_local]
};

// The partition's node order: new_to_old [N] and part_offsets [P+1] (identity, one part,
// without a partition file).
struct PartitionView {
  std::vector<std::int64_t> new_to_old;
  std::vector<std::int64_t> part_offsets;
};

// The partition file's node order, read through PartitionFile so that its /partition
// arrays are checked against their checksums, and checked against the dataset.
PartitionView read_partition(const std::string& path, const std::string& dataset_path,
                             const graph::DatasetMeta& meta) {
  const partition::PartitionFile pf = partition::PartitionFile::open(path);
  if (pf.dataset_checksum() != meta.checksum)
    throw DataError("partition " + path + " was made for a dataset with checksum " + pf.dataset_checksum() +
                    ", but dataset " + dataset_path + " has checksum " + meta.checksum +
                    ": use the partition made from this dataset (dpgnn partition)");
  PartitionView p;
  p.new_to_old = pf.new_to_old();
  p.part_offsets = pf.part_offsets();
  const std::int64_t n = meta.num_nodes;
  if (static_cast<std::int64_t>(p.new_to_old.size()) != n)
    throw DataError(path, "/partition/new_to_old", "has " + std::to_string(p.new_to_old.size()) +
                                                     " entries, the dataset has " + std::to_string(n) + " nodes");
  std::vector<std::uint8_t> seen(n, 0);
  for (std::int64_t old : p.new_to_old) {
    if (old < 0 || old >= n || seen[old])
      throw DataError(path, "/partition/new_to_old", "is not a permutation of 0.." + std::to_string(n - 1));
    seen[old] = 1;
  }
  const auto& o = p.part_offsets;
  if (o.size() < 2 || o.front() != 0 || o.back() != n || !std::is_sorted(o.begin(), o.end()))
    throw DataError(path, "/partition/part_offsets", "must rise from 0 to the node count " + std::to_string(n));
  return p;
}

// The training graph of the nodes new_to_old[b..e) (local id i <-> new_to_old[b+i]).
PartGraph part_graph(const graph::CsrGraph& g, const std::vector<std::uint8_t>& train_mask,
                     bool inductive, const std::vector<std::int64_t>& new_to_old, std::int64_t b,
                     std::int64_t e) {
  const std::int64_t n = g.num_nodes();
  // local[old] = local id in this part's training graph, -1 outside it.
  std::vector<std::int64_t> local(n, -1);
  PartGraph pg;
  for (std::int64_t i = b; i < e; ++i) {
    const std::int64_t old = new_to_old[i];
    if (inductive && !train_mask[old]) continue;
    local[old] = static_cast<std::int64_t>(pg.dataset_id.size());
    pg.dataset_id.push_back(old);
  }
  std::vector<graph::EdgeIdx> indptr{0};
  std::vector<graph::NodeId> indices;
  for (std::int64_t old : pg.dataset_id) {
    const std::size_t first = indices.size();
    for (graph::NodeId w : g.out_neigh(old))
      if (local[w] >= 0) indices.push_back(static_cast<graph::NodeId>(local[w]));
    std::sort(indices.begin() + static_cast<std::ptrdiff_t>(first), indices.end());
    indptr.push_back(static_cast<graph::EdgeIdx>(indices.size()));
    pg.train.push_back(train_mask[old]);
  }
  pg.graph = graph::CsrGraph(std::move(indptr), std::move(indices));
  return pg;
}

void write_int64_matrix(h5::File& f, const std::string& name, const std::vector<std::int64_t>& flat,
                        std::uint64_t cols) {
  const std::uint64_t rows = flat.size() / cols;
  auto ds = f.create_dataset<std::int64_t>(name, {rows, cols});
  if (rows > 0) ds.write_rows(0, rows, flat.data());
}

sampling::SamplerOptions sampler_options(const SampleOptions& opt) {
  sampling::SamplerOptions so;
  so.kind = sampling::parse_sampler_kind(opt.sampler);
  so.walk_length = opt.walk_length;
  so.restarts = so.kind == sampling::SamplerKind::drw ? 1 : opt.restarts;
  so.max_degree = opt.max_degree;
  so.degree_bound = sampling::parse_degree_bound(opt.degree_bound);
  so.layers = opt.layers;
  so.splits = opt.splits;
  so.walkers = opt.walkers;
  so.edges = sampling::parse_edge_mode(opt.edges);
  if (so.kind == sampling::SamplerKind::dpgnn) sampling::dpgnn_occurrence_bound(so.max_degree, so.layers);
  return so;
}

// All parts' subgraphs, concatenated in part order, in dataset ids.
struct SampledParts {
  std::vector<std::int64_t> roots, node_ptr{0}, nodes, edge_ptr{0}, edges, counts;
  bool loss_on_all_nodes = false;
  std::int64_t max_size = 0, max_occurrence = 0;
};

SampledParts sample_every_part(const SampleOptions& opt, const sampling::SamplerOptions& so, const graph::CsrGraph& g,
                               const std::vector<std::uint8_t>& train, bool inductive, const PartitionView& pv) {
  const std::int64_t parts = static_cast<std::int64_t>(pv.part_offsets.size()) - 1;
  std::vector<std::int64_t> train_counts(parts, 0);
  for (std::int64_t p = 0; p < parts; ++p)
    for (std::int64_t i = pv.part_offsets[p]; i < pv.part_offsets[p + 1]; ++i)
      train_counts[p] += train[pv.new_to_old[i]] ? 1 : 0;
  const std::vector<std::int64_t> splits = sampling::splits_per_part(so.splits, train_counts);
  SampledParts out;
  for (std::int64_t p = 0; p < parts; ++p) {
    const PartGraph pg = part_graph(g, train, inductive, pv.new_to_old, pv.part_offsets[p], pv.part_offsets[p + 1]);
    sampling::SamplerOptions part_options = so;
    part_options.splits = std::max<std::int64_t>(1, splits[p]);
    const sampling::SubgraphSet s =
        sampling::run_sampler(pg.graph, pg.train, part_options, {opt.seed, static_cast<std::uint64_t>(p), opt.epoch});
    const sampling::VerifyReport report =
        sampling::check_subgraphs(pg.graph, pg.train, s, sampling::checks_for(part_options));
    if (!report.ok()) {
      std::string msg = std::string("sampler ") + sampling::to_string(so.kind) + ", part " + std::to_string(p) +
                        ": the subgraph set breaks an invariant:";
      for (const auto& m : report.messages) msg += " " + m + ";";
      throw Error(msg, kExitInternal);
    }
    out.max_size = std::max(out.max_size, report.max_size);
    out.max_occurrence = std::max(out.max_occurrence, report.max_occurrence);
    out.loss_on_all_nodes = out.loss_on_all_nodes || s.loss_on_all_nodes;
    out.counts.push_back(s.size());
    const std::int64_t node_base = static_cast<std::int64_t>(out.nodes.size());
    const std::int64_t edge_base = static_cast<std::int64_t>(out.edges.size() / 2);
    for (std::int64_t r : s.roots) out.roots.push_back(pg.dataset_id[r]);
    for (std::int64_t v : s.nodes) out.nodes.push_back(pg.dataset_id[v]);
    for (std::int64_t i = 1; i <= s.size(); ++i) {
      out.node_ptr.push_back(node_base + s.node_ptr[i]);
      out.edge_ptr.push_back(edge_base + s.edge_ptr[i]);
    }
    for (const auto& [u, v] : s.edges) {
      out.edges.push_back(pg.dataset_id[u]);
      out.edges.push_back(pg.dataset_id[v]);
    }
  }
  return out;
}

// The subgraph file (docs/cli.md, `dpgnn sample`): the arrays and the sampler's settings.
void write_subgraph_file(const std::string& path, const SampleOptions& opt, const sampling::SamplerOptions& so,
                         const graph::DatasetMeta& meta, std::int64_t parts, const SampledParts& sp,
                         const sampling::GlobalIds& ids) {
  h5::File f = h5::File::create(path);
  f.write_vector("/roots", sp.roots);
  f.write_vector("/node_ptr", sp.node_ptr);
  f.write_vector("/nodes", sp.nodes);
  f.write_vector("/edge_ptr", sp.edge_ptr);
  write_int64_matrix(f, "/edges", sp.edges, 2);
  f.write_vector("/part_ptr", ids.offsets());
  f.set_attr("/", "format", std::string("dpgnn-subgraphs"));
  f.set_attr("/", "format_version", std::int64_t{1});
  f.set_attr("/", "sampler", std::string(sampling::to_string(so.kind)));
  f.set_attr("/", "seed", static_cast<std::int64_t>(opt.seed));
  f.set_attr("/", "epoch", static_cast<std::int64_t>(opt.epoch));
  f.set_attr("/", "num_subgraphs", ids.total());
  f.set_attr("/", "num_parts", parts);
  f.set_attr("/", "max_subgraph_size", sp.max_size);
  f.set_attr("/", "max_occurrence", sp.max_occurrence);
  f.set_attr("/", "loss_on_all_nodes", std::int64_t{sp.loss_on_all_nodes ? 1 : 0});
  f.set_attr("/", "dataset", opt.dataset);
  f.set_attr("/", "dataset_checksum", meta.checksum);
  f.set_attr("/", "partition", opt.partition);
  f.set_attr("/", "setting", std::string(graph::to_string(meta.setting)));
  switch (so.kind) {
    case sampling::SamplerKind::drw:
    case sampling::SamplerKind::drw_r:
      f.set_attr("/", "walk_length", so.walk_length);
      f.set_attr("/", "restarts", so.restarts);
      f.set_attr("/", "walkers", so.walkers);
      f.set_attr("/", "edge_mode", std::string(sampling::to_string(so.edges)));
      f.set_attr("/", "max_subgraph_size_bound", sampling::max_subgraph_size_bound(so));
      break;
    case sampling::SamplerKind::dpgnn:
      f.set_attr("/", "max_degree", so.max_degree);
      f.set_attr("/", "degree_bound", std::string(sampling::to_string(so.degree_bound)));
      f.set_attr("/", "layers", so.layers);
      f.set_attr("/", "edge_mode", std::string(sampling::to_string(so.edges)));
      f.set_attr("/", "occurrence_bound", sampling::dpgnn_occurrence_bound(so.max_degree, so.layers));
      break;
    case sampling::SamplerKind::split:
      f.set_attr("/", "splits", ids.total());
      f.set_attr("/", "edge_mode", std::string("induced"));
      break;
    case sampling::SamplerKind::node:
      f.set_attr("/", "max_subgraph_size_bound", std::int64_t{1});
      break;
  }
  f.close();
}

int run_sample(const SampleOptions& opt) {
  namespace fs = std::filesystem;
  if (fs::exists(opt.out) && !opt.force)
    throw UsageError("--out " + opt.out + " exists: pass --force to overwrite it");
  const sampling::SamplerOptions so = sampler_options(opt);

  const auto t0 = std::chrono::steady_clock::now();
  graph::DatasetReader reader(opt.dataset);
  const graph::DatasetMeta& meta = reader.meta();
  reader.verify_all();  // the subgraphs answer for the whole file, not only the arrays read here
  const bool inductive = meta.setting == graph::Setting::inductive;
  const graph::CsrGraph g = reader.read_graph();
  const std::vector<std::uint8_t> train = reader.read_mask("train", 0, meta.num_nodes);

  PartitionView pv;
  if (opt.partition.empty()) {
    pv.new_to_old.resize(meta.num_nodes);
    std::iota(pv.new_to_old.begin(), pv.new_to_old.end(), std::int64_t{0});
    pv.part_offsets = {0, meta.num_nodes};
  } else {
    pv = read_partition(opt.partition, opt.dataset, meta);
  }
  const std::int64_t parts = static_cast<std::int64_t>(pv.part_offsets.size()) - 1;
  const SampledParts sp = sample_every_part(opt, so, g, train, inductive, pv);
  const sampling::GlobalIds ids(sp.counts);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Written to a temporary file renamed at the end: a failed run leaves no half file.
  const std::string tmp = opt.out + ".tmp";
  write_subgraph_file(tmp, opt, so, meta, parts, sp, ids);
  std::error_code ec;
  fs::rename(tmp, opt.out, ec);
  if (ec) throw IoError("cannot rename " + tmp + " to " + opt.out + ": " + ec.message());
  spdlog::info("{}: {} subgraphs over {} part(s), largest {} nodes, {} edges; {:.2f} s -> {}",
               sampling::to_string(so.kind), ids.total(), parts, sp.max_size, sp.edges.size() / 2, seconds, opt.out);
  return 0;
}

}  // namespace

void add_sample_command(CLI::App& root, Registry& registry) {
  auto opt = std::make_shared<SampleOptions>();
  CLI::App* app = root.add_subcommand(
      "sample", "Run a subgraph sampler over a dataset (or each part of a partition) and write the subgraphs");
  app->add_option("--dataset", opt->dataset, "Dataset HDF5 file")->required();
  app->add_option("--partition", opt->partition,
                  "Partition file of this dataset: sample each part on its own (default: one part)");
  app->add_option("--sampler", opt->sampler, "drw | drw-r | drw-d (= drw; use --epoch) | dpgnn | node | split")
      ->required();
  app->add_option("--walk-length", opt->walk_length, "drw, drw-r: steps per walk L (>= 1)")->capture_default_str();
  app->add_option("--restarts", opt->restarts, "drw-r: walks per root R (>= 1)")->capture_default_str();
  app->add_option("--max-degree", opt->max_degree, "dpgnn: in-degree bound K (>= 1)")->capture_default_str();
  app->add_option("--degree-bound", opt->degree_bound,
                  "dpgnn: paper (SAMPLE-EDGELISTS, not covered by the guarantee) | require (no edge sampling; the "
                  "training in-degree must be <= K; covered): docs/privacy.md")
      ->capture_default_str();
  app->add_option("--layers", opt->layers, "dpgnn: neighbourhood depth r = GNN layers (>= 0)")->capture_default_str();
  app->add_option("--splits", opt->splits,
                  "split: number of splits of the training set (shared among parts by training nodes)")
      ->capture_default_str();
  app->add_option("--edges", opt->edges, "drw, drw-r, dpgnn: subgraph edges, walk | induced")->capture_default_str();
  app->add_option("--walkers", opt->walkers, "drw, drw-r: walkers interleaved per thread (1 = the paper's order)")
      ->capture_default_str();
  app->add_option("--seed", opt->seed, "Sampler seed")->capture_default_str();
  app->add_option("--epoch", opt->epoch, "Re-sampling round (DRW-D)")->capture_default_str();
  app->add_flag("--force", opt->force, "Overwrite --out if it exists");
  app->add_option("--out", opt->out, "Output HDF5 file of subgraphs")->required();
  registry.add(app, [opt]() { return run_sample(*opt); });
}

}  // namespace dpgnn::cli
