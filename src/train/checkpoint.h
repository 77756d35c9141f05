// Versioned, validated checkpoints (llm.c style): a magic string and version, the step,
// the world size, the config text and the dataset/partition checksums, the flat parameters
// and the optimiser state. Written by rank 0 to a temporary file renamed into place, so a
// crash mid-write leaves the previous checkpoint intact. The privacy accountant is NOT in
// the checkpoint: it is rebuilt from the ledger, which is never behind the training.
#pragma once

#include <cstdint>
#include <string>

#include "dpgnn/model/gnn.h"
#include "dpgnn/model/optimizer.h"

namespace dpgnn::train {

constexpr const char* kCheckpointFormat = "dpgnn-checkpoint";
constexpr std::int64_t kCheckpointVersion = 1;

struct CheckpointMeta {
  std::int64_t step = 0;  // completed steps
  int world_size = 1;
  std::string config_text;
  std::string dataset_checksum;
  std::string partition_checksum;
};

// `ema` (the parameter average, undefined when off) is stored beside the parameters.
void write_checkpoint(const std::string& path, const CheckpointMeta& meta, const model::Gnn& model,
                      const model::Optimizer& optimizer, const at::Tensor& ema);

// Reads the metadata only (validated: format, version).
CheckpointMeta read_checkpoint_meta(const std::string& path);

// Loads parameters and optimiser state into `model` and `optimizer` (shapes checked).
// `ema`, when defined, is filled from the checkpoint's average.
void load_checkpoint_state(const std::string& path, model::Gnn& model, model::Optimizer& optimizer, at::Tensor* ema);

// Writes the parameters, one dataset per parameter named by module path; `provenance` (JSON:
// version, commit, hosts, times, private) goes in a root attribute when not empty.
void write_model_file(const std::string& path, const model::Gnn& model, const std::string& config_text,
                      const std::string& provenance = "");

}  // namespace dpgnn::train
