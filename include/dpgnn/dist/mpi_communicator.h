// The MPI communicator: collectives on host buffers over a duplicate of MPI_COMM_WORLD.
//
// The duplicate keeps our messages apart from any other MPI use in the process, and
// carries MPI_ERRORS_RETURN so that failures come back as return codes and are thrown
// as IoError (with MPI_Error_string) instead of killing the job without a message.
// MPI counts and displacements are `int`: larger transfers are split into calls of at
// most `max_elements_per_call` elements (all-reduce and broadcast in consecutive chunks;
// all-gather(v) as chunked broadcasts from each rank; all-to-all-v as chunked
// point-to-point messages). The limit is a parameter so tests can exercise the chunked
// paths with small buffers.
#pragma once

#include <climits>
#include <cstddef>
#include <memory>

#include "dpgnn/dist/communicator.h"

namespace dpgnn::dist {

inline constexpr std::size_t kMpiMaxElementsPerCall = static_cast<std::size_t>(INT_MAX);

// Collective over MPI_COMM_WORLD. Needs MPI initialised (init_environment()).
// Throws UsageError when max_elements_per_call is 0 or above INT_MAX.
std::unique_ptr<Communicator> make_mpi_communicator(
    std::size_t max_elements_per_call = kMpiMaxElementsPerCall);

}  // namespace dpgnn::dist
