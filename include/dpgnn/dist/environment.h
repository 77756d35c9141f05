// The MPI environment of one process: start-up, rank facts, abort on error, finalize.
//
// Why it is built this way:
//   - MPI_Init_thread with MPI_THREAD_FUNNELED: LibTorch and OpenBLAS run their own thread
//     pools, but only the main thread calls MPI.
//   - The local rank (this process's index among the ranks on its node) picks the GPU and
//     the threads per rank. Launchers export it: OpenMPI's mpirun sets
//     OMPI_COMM_WORLD_LOCAL_RANK/_SIZE, SLURM's srun sets SLURM_LOCALID (and
//     SLURM_NTASKS_PER_NODE when --ntasks-per-node was given). Without them (or when they
//     contradict the world size) it comes from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED).
//     The choice is made collectively, so either all ranks split or none does.
//   - A failing rank must not leave the others waiting in a collective forever: init
//     installs an abort handler (dpgnn::set_abort_handler) that calls MPI_Abort, which
//     main() runs after printing the error.
//   - finalize() is explicit and called at the end of a successful run only. Destructors
//     never call MPI_Finalize: it is collective, so a rank unwinding after an error would
//     block in it while the others wait elsewhere (LightGBM's Network::Dispose reasoning).
//   - A binary started without mpirun initialises MPI as a singleton (world size 1), so
//     `dpgnn train` on a laptop needs no launcher.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace dpgnn::dist {

struct EnvironmentInfo {
  int world_rank = 0;
  int world_size = 1;
  int local_rank = 0;  // index of this rank among the ranks on its node
  int local_size = 1;  // number of ranks on this node
  // Where local_rank/local_size came from: "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
  // or "MPI_Comm_split_type".
  std::string local_rank_source;
  int thread_level = 0;  // the MPI thread support provided (MPI_THREAD_* value)
};

// Initialises MPI (unless something already did), sets MPI_ERRORS_RETURN on
// MPI_COMM_WORLD, detects the local rank, installs the MPI_Abort handler and tells logging
// the rank. Idempotent: later calls return the same facts. Collective.
// Throws IoError when MPI fails to start or provides less than MPI_THREAD_FUNNELED.
const EnvironmentInfo& init_environment(int* argc, char*** argv);
// The facts of the initialised environment; throws UsageError before init_environment().
const EnvironmentInfo& environment();
bool environment_initialized();
// MPI_Finalize, at the end of a successful run (collective). Destroy every communicator
// first. Does nothing when MPI is not initialised or already finalised.
void finalize_environment();
// MPI_Abort(MPI_COMM_WORLD, exit_code) when MPI is running; otherwise std::exit(exit_code).
[[noreturn]] void abort_job(int exit_code);

// Local rank as announced by the launcher's environment variables, checked for
// consistency with the world; std::nullopt when none is set or they do not fit (then the
// caller asks MPI). `getenv` is injectable for tests. Throws UsageError naming the
// variable when one is set but not a non-negative integer.
struct LauncherLocalRank {
  int local_rank = 0;
  std::optional<int> local_size;  // SLURM_NTASKS_PER_NODE may be absent
  std::string source;
};
using EnvLookup = std::function<const char*(const char*)>;
std::optional<LauncherLocalRank> local_rank_from_launcher(int world_rank, int world_size,
                                                          const EnvLookup& getenv);

}  // namespace dpgnn::dist
