// `dpgnn sweep COMMAND ...`: grids of training runs (plan, run, slurm, collect, plot, all),
// implemented by tools/dpgnn_sweep.py and reached through the binary users already have.
//
// Why a thin wrapper: a sweep is orchestration (YAML specs, subprocesses, a CSV, a matplotlib
// figure), which Python does in a few hundred lines with Debian's python3-yaml and
// python3-matplotlib; the C++ side only finds the script and the interpreter the way
// `dpgnn import` finds its converter (DPGNN_TOOLS_DIR, DPGNN_PYTHON; graph/import/converter.h)
// and replaces itself with it, so the script's output, exit codes and signals are the
// command's own. DPGNN_BIN is set to this binary unless given, so a sweep trains with the
// same dpgnn that started it. docs/sweeps.md describes the commands.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "command.h"
#include "dpgnn/graph/import/converter.h"
#include "dpgnn/util/error.h"

namespace dpgnn::cli {

namespace {

constexpr const char* kSweepScript = "dpgnn_sweep.py";

[[noreturn]] void exec_sweep_script(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  const auto [python, script] = graph::import::locate_python_tool(
      kSweepScript, "the sweep tool",
      "install python3-yaml and python3-matplotlib (scripts/install-deps.sh does), or set DPGNN_PYTHON");
  std::error_code ec;
  const char* bin = std::getenv("DPGNN_BIN");
  if (bin == nullptr || *bin == '\0') {
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) ::setenv("DPGNN_BIN", self.c_str(), 1);
  }
  ::setenv("DPGNN_SWEEP_PROG", "dpgnn sweep", 1);  // the name its usage lines show
  std::vector<std::string> argv_text = {python, script};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(python.c_str(), argv.data());
  throw IoError("cannot run '" + python + " " + script + "': " + std::strerror(errno));
}

}  // namespace

void add_sweep_command(CLI::App& root, Registry& registry) {
  CLI::App* app = root.add_subcommand(
      "sweep",
      "Run a grid of training runs (locally or as a SLURM job array), collect the summaries into a CSV and "
      "plot accuracy vs epsilon: dpgnn sweep plan|run|slurm|collect|plot|all ... (tools/dpgnn_sweep.py; "
      "`dpgnn sweep --help`, docs/sweeps.md)");
  // Every argument, --help included, belongs to the script.
  app->prefix_command();
  app->set_help_flag();
  app->allow_extras();
  registry.add(app, [app]() -> int { exec_sweep_script(app->remaining()); });
}

}  // namespace dpgnn::cli
