// Distributed partitioning: `mpiexec -n W dpgnn partition` (W >= 2) partitions with PT-Scotch
// and writes the same partition file as the single-process METIS writer (partition_writer.h;
// docs/partitioning.md, "Distributed partitioning").
//
// Nothing on a rank is sized by the whole graph (DESIGN.md 11): rank r reads only its block
// of ORIGINAL ids [r N / W, (r+1) N / W) (CSR rows, features, labels, masks by hyperslab),
// symmetrises it with one all-to-all, PT-Scotch partitions the distributed graph, the new ids
// follow from per-rank part counts (an all-gather of W x P numbers), and the new ids of remote
// neighbours come from one all-to-all lookup. Rank 0 then writes the file in new-id order:
// part p's nodes in original-id order are rank 0's nodes of part p, then rank 1's, ..., so
// every rank streams its rows of each part to rank 0 in pieces (bounded buffers), field by
// field, through graph::DatasetWriter's row-streaming calls. The content checksum and the
// per-block tables therefore equal what the single-process writer computes for the same
// assignment.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "dpgnn/partition/partition_writer.h"

namespace dpgnn::dist {
class Collectives;
}

namespace dpgnn::partition {

// The `method` a PT-Scotch partition file records (structure-aware, like "metis").
constexpr const char* kPtScotchMethod = "ptscotch";

// Original ids [first, second) that rank `rank` of `world_size` reads: [r N / W, (r+1) N / W).
std::pair<std::int64_t, std::int64_t> input_block(std::int64_t num_nodes, int rank, int world_size);

// Collective over `comms` (the command's, dist/collectives.h: any world size >= 1; the CLI
// uses it for >= 2). options.method must be metis (structure-aware: PT-Scotch here); random is refused
// (it runs on one process). The quality (edge cut, balance, per-part counts) is known on
// every rank; checksum, seconds_* and rank_peak_rss on rank 0. Errors every rank meets alike
// (bad option, missing or malformed dataset) are CollectiveErrors that rank 0 reports.
PartitionReport partition_dataset_distributed(const std::string& dataset_path, const std::string& out_path,
                                              const PartitionOptions& options, const dist::Collectives& comms);

}  // namespace dpgnn::partition
