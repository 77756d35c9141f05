// `dpgnn predict` (see include/dpgnn/train/predict.h).
#include "dpgnn/train/predict.h"

#include <torch/torch.h>

#include <filesystem>

#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/model/gnn.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/train/config.h"
#include "dpgnn/util/error.h"
#include "feature_norm.h"
#include "dpgnn/util/hdf5.h"
#include "evaluator.h"
#include "methods/dpar_labels.h"
#include "methods/method.h"
#include "run_directory.h"

namespace dpgnn::train {
namespace fs = std::filesystem;
namespace {

// Reads model.h5's parameters (written by write_model_file) into `net`, checking each shape.
void load_parameters(const std::string& path, model::Gnn& net) {
  auto f = h5::File::open_read(path);
  if (!f.has_attr("/", "format") || f.attr_string("/", "format") != "dpgnn-model")
    throw DataError(path, "/", "is not a dpgnn model file (attribute format != dpgnn-model)");
  at::Tensor flat = torch::empty({net.num_parameters()}, torch::kFloat32);
  const auto& names = net.parameter_names();
  const auto& params = net.parameters();
  const auto& offsets = net.parameter_offsets();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string ds_path = "/" + names[i];
    if (!f.exists(ds_path))
      throw DataError(path, ds_path, "missing: the model of the run's config has this parameter");
    const auto ds = f.open_dataset(ds_path);
    std::vector<std::uint64_t> want;
    for (auto d : params[i].sizes()) want.push_back(static_cast<std::uint64_t>(d));
    if (ds.shape() != want)
      throw DataError(path, ds_path, "has a shape that does not match the run's config and dataset");
    const auto v = ds.read_all<float>();
    std::copy(v.begin(), v.end(), flat.data_ptr<float>() + offsets[i]);
  }
  net.unflatten(flat.to(net.device(), net.dtype()));
}

// The run's released training labels (DPAR's label release), read back from the run directory
// and checked against the digest its ledger records; nothing when the ledger records none.
std::optional<methods::ReleasedLabels> stored_labels(const fs::path& run) {
  const RunDirectory dir(run);
  const fs::path ledger_path = dir.paths().ledger();
  if (!fs::exists(ledger_path)) return std::nullopt;
  const Ledger ledger = read_ledger_file(ledger_path.string());
  for (const auto& r : ledger.releases)
    if (r.name == methods::kLabelReleaseName) return methods::parse_labels(dir.read_release(r), (run / r.file).string());
  return std::nullopt;
}

}  // namespace

PredictResult run_prediction(const PredictOptions& o, const dist::Collectives& comms) {
  dist::Communicator& comm = comms.host();
  const fs::path run(o.run_dir);
  const std::string config_path = (run / "config.yaml").string();
  const std::string model_path = (run / "model.h5").string();
  for (const auto& p : {config_path, model_path})
    if (!fs::exists(p))
      throw CollectiveError("dpgnn predict: " + p + " does not exist (--run must be a finished training run directory)",
                            kExitUsage, comm.rank() == 0);
  Config cfg = load_config(config_path, {});
  if (!o.dataset.empty()) {
    cfg.data.dataset = o.dataset;
    cfg.data.partition = o.partition;  // a partition of another dataset would not match
  } else if (!o.partition.empty()) {
    cfg.data.partition = o.partition;
  }
  const auto pf = partition::PartitionFile::open_or_single(cfg.data.partition, cfg.data.dataset);
  if (comm.size() > pf.num_parts())
    throw UsageError("dpgnn predict: " + std::to_string(comm.size()) + " ranks but " + pf.path() + " has " +
                     std::to_string(pf.num_parts()) + " part(s): use at most that many ranks");
  partition::Shard shard = partition::load_shard(pf, comm.rank(), comm.size());
  const auto& meta = shard.meta;
  normalize_feature_rows(shard.features.data(), shard.num_local(), meta.num_features, cfg.model.input_norm);
  // Prediction runs on the CPU: it needs no GPU, and CPU results are what the tests pin.
  const c10::Device device(c10::kCPU);
  model::Gnn net(methods::model_config(cfg, meta), cfg.train.seed, device);
  load_parameters(model_path, net);

  Evaluator evaluator(shard, comms, device);
  // The method's inference post-processing (DPAR: the power iteration), as in training.
  const auto propagation = methods::method_spec(cfg.method_enum()).propagation(cfg, meta);
  evaluator.set_propagation(propagation.steps, propagation.alpha, propagation.center, propagation.keep_shares);
  if (const auto labels = stored_labels(run))
    evaluator.set_label_evidence(labels->categories, labels->keep_probability, labels->nodes, labels->labels,
                                 cfg.dpar.choose_steps);
  const at::Tensor logits = evaluator.logits(net).to(torch::kCPU, torch::kFloat32).contiguous();
  const at::Tensor pred = net.predict(logits).contiguous();
  const EvalResult m = evaluator.metrics(pred);

  if (!o.out.empty()) {
    const std::int64_t N = meta.num_nodes, C = meta.num_classes, n = shard.num_local();
    std::int64_t ok = 1;
    std::string why;
    if (comm.rank() == 0) {
      try {
        if (fs::exists(o.out) && !o.force)
          throw UsageError("dpgnn predict: " + o.out + " exists (use --force to replace it)");
        auto f = h5::File::create(o.out);
        f.set_attr("/", "format", std::string("dpgnn-predictions"));
        f.set_attr("/", "format_version", static_cast<std::int64_t>(1));
        f.set_attr("/", "run", o.run_dir);
        f.set_attr("/", "dataset", cfg.data.dataset);
        f.set_attr("/", "partition", pf.path());
        f.set_attr("/", "multilabel", static_cast<std::int64_t>(meta.multilabel ? 1 : 0));
        f.set_attr("/", "private", static_cast<std::int64_t>(run_is_private(cfg) ? 1 : 0));
        const auto rows = static_cast<std::uint64_t>(N), cols = static_cast<std::uint64_t>(C);
        f.create_dataset<std::int64_t>("/node_id", {rows});
        f.create_dataset<float>("/logits", {rows, cols});
        if (meta.multilabel)
          f.create_dataset<std::uint8_t>("/prediction", {rows, cols});
        else
          f.create_dataset<std::int64_t>("/prediction", {rows});
      } catch (const Error& e) {
        ok = 0;
        why = e.what();
      }
    }
    comm.broadcast(&ok, 1, 0);
    if (!ok) {
      throw CollectiveError(comm.rank() == 0 ? why : "dpgnn predict: rank 0 cannot write --out", kExitUsage,
                            comm.rank() == 0);
    }
    // Each rank writes its rows (partition order: rows [begin, end)) in turn.
    for (int r = 0; r < comm.size(); ++r) {
      if (r == comm.rank()) {
        auto f = h5::File::open_readwrite(o.out);
        const auto r0 = static_cast<std::uint64_t>(shard.begin), nr = static_cast<std::uint64_t>(n);
        f.open_dataset("/node_id").write_rows(r0, nr, shard.new_to_old.data());
        f.open_dataset("/logits").write_rows(r0, nr, logits.data_ptr<float>());
        if (meta.multilabel) {
          const at::Tensor p8 = pred.to(torch::kUInt8).contiguous();
          f.open_dataset("/prediction").write_rows(r0, nr, p8.data_ptr<std::uint8_t>());
        } else {
          f.open_dataset("/prediction").write_rows(r0, nr, pred.data_ptr<std::int64_t>());
        }
      }
      comm.barrier();
    }
  }
  PredictResult r;
  r.multilabel = meta.multilabel;
  r.val = m.val;
  r.test = m.test;
  r.val_nodes = m.val_nodes;
  r.test_nodes = m.test_nodes;
  r.nodes = meta.num_nodes;
  r.classes = meta.num_classes;
  r.is_private = run_is_private(cfg);
  return r;
}

}  // namespace dpgnn::train
