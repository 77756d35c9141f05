// MPI start-up, local-rank detection, abort-on-error and finalize (see environment.h).
//
// The local-rank decision is collective: every rank first reads its launcher's variables,
// then one MPI_Allreduce (logical or) tells whether any rank lacks a usable answer; if so
// all ranks call MPI_Comm_split_type together. Deciding per rank would leave some ranks
// waiting in a split that others never join when launch environments differ.
#include "dpgnn/dist/environment.h"

#include <mpi.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "dpgnn/util/error.h"
#include "dpgnn/util/log.h"
#include "mpi_check.h"

namespace dpgnn::dist {
namespace {

EnvironmentInfo g_info;
bool g_initialized = false;

void abort_handler(int exit_code) { abort_job(exit_code); }

// A non-negative integer from an environment variable, or nullopt when unset/empty.
std::optional<int> env_int(const EnvLookup& getenv, const char* name) {
  const char* text = getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 0 || value > 1000000)
    throw UsageError(std::string("environment variable ") + name + "='" + text +
                     "' is not a non-negative integer");
  return static_cast<int>(value);
}

// Local rank and size of this rank from the ranks sharing its memory (its node).
void split_by_node(int world_rank, int* local_rank, int* local_size) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL,
                                &node));
  MPI_CHECK(MPI_Comm_rank(node, local_rank));
  MPI_CHECK(MPI_Comm_size(node, local_size));
  MPI_CHECK(MPI_Comm_free(&node));
}

}  // namespace

std::optional<LauncherLocalRank> local_rank_from_launcher(int world_rank, int world_size,
                                                          const EnvLookup& getenv) {
  (void)world_rank;
  LauncherLocalRank found;
  if (auto rank = env_int(getenv, "OMPI_COMM_WORLD_LOCAL_RANK")) {
    found.local_rank = *rank;
    found.local_size = env_int(getenv, "OMPI_COMM_WORLD_LOCAL_SIZE");
    found.source = "OMPI_COMM_WORLD_LOCAL_RANK";
  } else if (auto slurm_rank = env_int(getenv, "SLURM_LOCALID")) {
    found.local_rank = *slurm_rank;
    found.local_size = env_int(getenv, "SLURM_NTASKS_PER_NODE");
    found.source = "SLURM_LOCALID";
  } else {
    return std::nullopt;
  }
  // A launcher variable that contradicts the world is stale (e.g. a singleton run inside
  // a SLURM step of several tasks): ignore it and ask MPI.
  if (found.local_rank >= world_size) return std::nullopt;
  if (found.local_size) {
    if (*found.local_size < 1 || *found.local_size > world_size ||
        found.local_rank >= *found.local_size)
      return std::nullopt;
  }
  return found;
}

const EnvironmentInfo& init_environment(int* argc, char*** argv) {
  if (g_initialized) return g_info;
  int already = 0;
  MPI_CHECK(MPI_Initialized(&already));
  int provided = MPI_THREAD_SINGLE;
  if (already) {
    MPI_CHECK(MPI_Query_thread(&provided));
  } else {
    // Before MPI_Init there is no error handler to set: a failure here is fatal inside MPI
    // on most implementations, and otherwise comes back as a return code.
    MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
  }
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  if (provided < MPI_THREAD_FUNNELED)
    throw IoError("MPI provides thread level " + std::to_string(provided) +
                  ", below MPI_THREAD_FUNNELED; use an MPI library built with thread support");

  EnvironmentInfo info;
  info.thread_level = provided;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &info.world_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &info.world_size));
  // From here on a failing rank takes the job down instead of leaving the others waiting.
  set_abort_handler(&abort_handler);
  set_logging_rank(info.world_rank, info.world_size);

  const auto launcher = local_rank_from_launcher(
      info.world_rank, info.world_size, [](const char* name) { return std::getenv(name); });
  int need_split = launcher && launcher->local_size ? 0 : 1;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &need_split, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
  if (need_split) {
    split_by_node(info.world_rank, &info.local_rank, &info.local_size);
    info.local_rank_source = "MPI_Comm_split_type";
    // The launcher's index is kept when it has one: it is what the launcher bound the
    // process to (CPU sets, CUDA_VISIBLE_DEVICES).
    if (launcher && launcher->local_rank < info.local_size) {
      info.local_rank = launcher->local_rank;
      info.local_rank_source = launcher->source;
    }
  } else {
    info.local_rank = launcher->local_rank;
    info.local_size = *launcher->local_size;
    info.local_rank_source = launcher->source;
  }
  g_info = info;
  g_initialized = true;
  spdlog::debug("MPI: rank {}/{} local {}/{} (from {}), thread level {}", info.world_rank,
                info.world_size, info.local_rank, info.local_size, info.local_rank_source,
                info.thread_level);
  return g_info;
}

const EnvironmentInfo& environment() {
  if (!g_initialized)
    throw UsageError("dist: the MPI environment is not initialised: call init_environment() first");
  return g_info;
}

bool environment_initialized() { return g_initialized; }

void finalize_environment() {
  int initialized = 0;
  int finalized = 0;
  MPI_CHECK(MPI_Initialized(&initialized));
  MPI_CHECK(MPI_Finalized(&finalized));
  if (!initialized || finalized) return;
  set_abort_handler(nullptr);
  MPI_CHECK(MPI_Finalize());
}

void abort_job(int exit_code) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

}  // namespace dpgnn::dist
