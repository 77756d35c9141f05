// A tiny MPI program for test_abort_on_error: with `--fail-rank R`, rank R throws an
// IoError while the other ranks wait in a barrier, and main() handles it exactly as
// `dpgnn`'s main does (print, dpgnn::abort_peers_on_error). Without the abort handler
// that dist::init_environment installs, the waiting ranks would hang forever.
// Without arguments no rank fails and the job ends normally (exit 0).
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "dpgnn/dist/environment.h"
#include "dpgnn/dist/mpi_communicator.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/log.h"

int main(int argc, char** argv) {
  dpgnn::init_logging();
  int code = dpgnn::kExitInternal;
  try {
    const auto& env = dpgnn::dist::init_environment(&argc, &argv);
    const int fail_rank =
        argc == 3 && std::strcmp(argv[1], "--fail-rank") == 0 ? std::atoi(argv[2]) : -1;
    auto comm = dpgnn::dist::make_mpi_communicator();
    if (env.world_rank == fail_rank)
      throw dpgnn::IoError("abort_probe: rank " + std::to_string(fail_rank) + " fails on purpose");
    comm->barrier();  // the failing rank never arrives
    comm.reset();
    code = dpgnn::kExitOk;
  } catch (const dpgnn::Error& e) {
    spdlog::error("{}", e.what());
    code = e.exit_code();
  }
  dpgnn::abort_peers_on_error(code);
  dpgnn::dist::finalize_environment();
  return code;
}
