// The subcommand registry of the `dpgnn` binary.
//
// Each subcommand lives in its own cmd_<name>.cpp with one function that adds a CLI11
// subcommand to the root app and registers the action to run when it is chosen. main.cpp
// calls them all, parses, and maps exceptions to the exit codes of util/error.h.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "dpgnn/dist/collectives.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/system.h"

namespace dpgnn::cli {

// Whether this process is the launcher's rank 0, read before MPI is up (mpirun, PMI, PMIx,
// srun variables; a plain run is rank 0): the MPI subcommands print a start-up error once.
inline bool launcher_rank_is_zero() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return std::string(v) == "0";
  }
  return true;
}

// The program's argv, kept by main(): `train`, `predict` and `audit` restart the program with
// it once, with glibc's malloc tuned for their steps (util/system.h), after their options and
// config are checked and before MPI starts, so that a start-up error is raised and printed as
// before the restart, by every rank at the same point.
char** program_argv();
void set_program_argv(char** argv);
inline void restart_with_tuned_malloc() { reexec_with_tuned_malloc(program_argv()); }

// The number of ranks the launcher started (mpirun, PMI, srun variables), read before MPI
// is up; 1 for a plain run. `dpgnn partition` starts MPI only when it is above 1.
inline int launcher_world_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return std::max(1, std::atoi(v));
  }
  return 1;
}

// DPGNN_GPU_COLLECTIVES (read by dist/collectives.h), checked before MPI starts by the
// commands that open a Collectives on a GPU: a bad value stops every rank with one message.
inline void check_gpu_collectives_variable(bool report) {
  try {
    (void)dist::gpu_collectives_from_environment();
  } catch (const UsageError& e) {
    throw CollectiveError(e.what(), kExitUsage, report);
  }
}

using Action = std::function<int()>;

class Registry {
 public:
  void add(CLI::App* app, Action action) { entries_.push_back({app, std::move(action)}); }
  // The action of the subcommand the user chose, or nullptr.
  Action* chosen() {
    for (auto& e : entries_)
      if (e.app->parsed()) return &e.action;
    return nullptr;
  }

 private:
  struct Entry {
    CLI::App* app;
    Action action;
  };
  std::vector<Entry> entries_;
};

// One per cmd_<name>.cpp.
void add_info_command(CLI::App& root, Registry& registry);
void add_train_command(CLI::App& root, Registry& registry);
void add_predict_command(CLI::App& root, Registry& registry);
void add_sweep_command(CLI::App& root, Registry& registry);
void add_synth_command(CLI::App& root, Registry& registry);
void add_privacy_command(CLI::App& root, Registry& registry);
void add_partition_command(CLI::App& root, Registry& registry);
void add_import_command(CLI::App& root, Registry& registry);
void add_sample_command(CLI::App& root, Registry& registry);
void add_audit_command(CLI::App& root, Registry& registry);
void add_prepare_command(CLI::App& root, Registry& registry);

}  // namespace dpgnn::cli
