// `dpgnn` — one binary, one subcommand per job (import, info, synth, partition, sample,
// privacy, train, ...). Parses the command line, runs the chosen subcommand, and turns
// every exception into one clear message and a documented exit code (docs/cli.md).
// When MPI is running, a failing rank aborts the job so that the other ranks do not hang.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <thread>

#include "command.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/log.h"
#include "dpgnn/util/system.h"
#include "dpgnn/graph/import/converter.h"
#include "dpgnn/util/version.h"

namespace dpgnn::cli {
namespace {
char** g_argv = nullptr;
}  // namespace
char** program_argv() { return g_argv; }
void set_program_argv(char** argv) { g_argv = argv; }
}  // namespace dpgnn::cli

namespace {

int run(int argc, char** argv) {
  CLI::App app{"dpgnn: distributed differentially private graph neural network training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("dpgnn ") + dpgnn::kVersion + " (commit " + dpgnn::kCommit +
                                         ")\ntools: " + dpgnn::graph::import::tools_dir());
  app.footer(
      "Exit codes: 0 ok, 1 internal error, 2 bad argument/config/parameter, 3 malformed input "
      "file, 4 I/O or system error. See docs/cli.md.\n");
  dpgnn::cli::Registry registry;
  // One line per subcommand (declared in command.h, defined in cmd_<name>.cpp).
  dpgnn::cli::add_info_command(app, registry);
  dpgnn::cli::add_synth_command(app, registry);
  dpgnn::cli::add_privacy_command(app, registry);
  dpgnn::cli::add_partition_command(app, registry);
  dpgnn::cli::add_import_command(app, registry);
  dpgnn::cli::add_sample_command(app, registry);
  dpgnn::cli::add_train_command(app, registry);
  dpgnn::cli::add_predict_command(app, registry);
  dpgnn::cli::add_sweep_command(app, registry);
  dpgnn::cli::add_audit_command(app, registry);
  dpgnn::cli::add_prepare_command(app, registry);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the parse error
    return code == 0 ? dpgnn::kExitOk : dpgnn::kExitUsage;
  }
  dpgnn::cli::Action* action = registry.chosen();
  if (action == nullptr) {
    std::cerr << app.help();
    return dpgnn::kExitUsage;
  }
  return (*action)();
}

}  // namespace

int main(int argc, char** argv) {
  dpgnn::cli::set_program_argv(argv);  // train, predict and audit restart with it (command.h)
  dpgnn::init_logging();
  if (const char* t = std::getenv("GLIBC_TUNABLES")) spdlog::debug("malloc: GLIBC_TUNABLES={}", t);
  int code = dpgnn::kExitInternal;
  bool collective = false;
  try {
    code = run(argc, argv);
  } catch (const dpgnn::CollectiveError& e) {
    // Raised by every rank alike: report once and shut down cleanly.
    if (e.report()) spdlog::error("{}", e.what());
    // A silent rank leaves the reporting one time to print: before MPI is up (a bad config),
    // the launcher ends the whole job when the first rank exits non-zero, and would cut the
    // one message off when a silent rank got there first.
    if (!e.report()) std::this_thread::sleep_for(std::chrono::seconds(2));
    code = e.exit_code();
    collective = true;
  } catch (const dpgnn::Error& e) {
    spdlog::error("{}", e.what());
    code = e.exit_code();
  } catch (const std::invalid_argument& e) {
    // The privacy module (standard library only) reports bad parameters this way.
    spdlog::error("{}", e.what());
    code = dpgnn::kExitUsage;
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
    code = dpgnn::kExitInternal;
  }
  if (collective)
    dpgnn::finalize_peers();
  else
    dpgnn::abort_peers_on_error(code);
  return code;
}
