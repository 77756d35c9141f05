// The NCCL communicator: collectives on CUDA buffers of one device per rank.
//
// Bootstrapped as nccl-tests and llm.c do: rank 0 creates an ncclUniqueId and broadcasts
// its bytes over a host communicator (MPI in a job), then every rank calls
// ncclCommInitRank on its device. Each collective is enqueued on the communicator's own
// CUDA stream and the call waits for it (polling ncclCommGetAsyncError, so a failed peer
// turns into an exception instead of a hang): callers can treat it like MPI.
// all-gather-v and all-to-all-v are grouped ncclSend/ncclRecv pairs.
#pragma once

#include <memory>

#include "dpgnn/dist/communicator.h"

namespace dpgnn::dist {

// Collective over the ranks of `bootstrap` (a host communicator), on `cuda_device`.
// Throws UsageError when the build has no NCCL or `bootstrap` is not a host communicator,
// IoError when CUDA or NCCL fail.
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int cuda_device);

}  // namespace dpgnn::dist
