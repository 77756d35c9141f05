// `dpgnn predict`: a trained model (RUN_DIR/model.h5 with RUN_DIR/config.yaml) run over the
// whole graph with the evaluator's scalable full-neighbourhood inference (one CSR SpMM per
// layer, halo rows exchanged once per layer), on any number of ranks <= the partition's parts.
// Writes per-node logits and predictions to one HDF5 file (docs/cli.md, "predict"), each
// rank its own rows, and returns the metrics on the splits that have labels.
#pragma once

#include <cstdint>
#include <string>

namespace dpgnn::dist {
class Collectives;
}

namespace dpgnn::train {

struct PredictOptions {
  std::string run_dir;    // holds config.yaml and model.h5
  std::string dataset;    // empty: the run's data.dataset
  std::string partition;  // empty: the run's data.partition (with --dataset alone: none)
  std::string out;        // predictions HDF5; empty: write nothing
  bool force = false;     // replace an existing --out
};

struct PredictResult {
  bool multilabel = false;
  double val = 0.0, test = 0.0;  // accuracy or micro-F1, as the trainer's summary
  std::int64_t val_nodes = 0, test_nodes = 0, nodes = 0, classes = 0;
  bool is_private = false;  // run_is_private of the run that trained the model
};

// Collective over `comms` (on the CPU: host buffers). Throws UsageError / DataError / IoError
// naming the file and the problem (missing model, parameter shape that does not match the config).
PredictResult run_prediction(const PredictOptions& options, const dist::Collectives& comms);

}  // namespace dpgnn::train
