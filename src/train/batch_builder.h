// Turns the subgraphs a step selected on this rank into one model::Batch.
//
// Subgraph node ids are part-local (sampler output); a part's rows start at
// `row_offset` in the shard's arrays. Edges are listed once per undirected pair by the
// sampler and emitted in both directions, as the model's GraphBlock expects. node_key =
// global subgraph id * 2^20 + position, unique in the global batch, so dropout masks do not
// depend on how the batch was split across ranks. A set with loss_on_all_nodes (graph
// splits) puts every node of its subgraphs into the loss (model::Batch::loss_rows).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "dpgnn/model/batch.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/sampling/subgraph_set.h"

namespace dpgnn::train {

struct PartSamples {
  int part = 0;
  std::int64_t row_offset = 0;  // first shard row of the part
  std::int64_t first_gid = 0;   // global id of the part's subgraph 0
  sampling::SubgraphSet set;
};

struct Pick {
  std::size_t part_index = 0;  // into the PartSamples vector
  std::int64_t local = 0;      // subgraph index within the part
  std::int64_t gid = 0;        // global subgraph id
};

// `example_features` (optional): shard row -> the input features of that node's example when
// they are not its own feature row (DPAR's aggregated top-K features).
model::Batch build_batch(const std::vector<Pick>& picks, const std::vector<PartSamples>& parts,
                         const partition::Shard& shard, c10::Device device,
                         const std::unordered_map<std::int64_t, std::vector<float>>* example_features = nullptr);

}  // namespace dpgnn::train
