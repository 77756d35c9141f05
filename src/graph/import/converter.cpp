// Running the Python converters of tools/ (see include/dpgnn/graph/import/converter.h).
//
// posix_spawn (no shell: paths with spaces or quotes need no escaping) with the
// converter's stderr captured to a file in the temporary directory, so that its error
// message can be put into the typed exception that main() prints.
#include "dpgnn/graph/import/converter.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dpgnn/graph/import/raw_hdf5.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/remove_tree.h"

extern char** environ;

#ifndef DPGNN_TOOLS_DIR_DEFAULT
#error "DPGNN_TOOLS_DIR_DEFAULT must be defined by the build (src/graph/CMakeLists.txt)"
#endif

namespace dpgnn::graph::import {

namespace fs = std::filesystem;

namespace {

constexpr const char* kConverterScript = "dpgnn_convert.py";
constexpr const char* kDebianPackages = "python3 python3-numpy python3-scipy python3-h5py";
constexpr int kExitMissingModule = 5;  // dpgnn_convert.py: an import of numpy/scipy/h5py failed

// A private temporary directory, removed with everything in it when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "dpgnn-import-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw IoError("cannot create a temporary directory in " + fs::temp_directory_path().string() + ": " +
                    std::strerror(errno));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    remove_tree(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

std::string tools_dir() {
  const char* env = std::getenv("DPGNN_TOOLS_DIR");
  if (env != nullptr && *env != '\0') return env;
  // An installed dpgnn (`cmake --install`) has its tools in PREFIX/share/dpgnn/tools, beside
  // PREFIX/bin/dpgnn: found from the running binary, so a prefix can move.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "dpgnn" / "tools";
    if (fs::is_regular_file(installed / "dpgnn_convert.py", ec)) return installed.string();
  }
  return DPGNN_TOOLS_DIR_DEFAULT;  // the build tree's sources
}

std::string python_interpreter() {
  const char* env = std::getenv("DPGNN_PYTHON");
  return (env != nullptr && *env != '\0') ? env : "/usr/bin/python3";
}

PythonTool locate_python_tool(const std::string& script_name, const std::string& description,
                              const std::string& install_hint) {
  PythonTool tool{python_interpreter(), (fs::path(tools_dir()) / script_name).string()};
  std::error_code ec;
  if (!fs::is_regular_file(tool.script, ec))
    throw IoError(description + " '" + tool.script +
                  "' does not exist: set DPGNN_TOOLS_DIR to the tools/ folder of the dpgnn sources (an installed "
                  "dpgnn has it in PREFIX/share/dpgnn/tools)");
  if (::access(tool.python.c_str(), X_OK) != 0)
    throw IoError("Python interpreter '" + tool.python + "' not found or not executable (" + std::strerror(errno) +
                  "): " + install_hint);
  return tool;
}

RawGraph run_converter(const std::string& format, const std::vector<std::string>& args) {
  const auto [python, script] = locate_python_tool(
      kConverterScript, "the Python converter",
      std::string("install the Debian packages ") + kDebianPackages +
          " (scripts/install-deps.sh does), or set DPGNN_PYTHON to an interpreter with numpy, scipy and h5py");

  TempDir tmp;
  const std::string out = (tmp.path() / "raw.h5").string();
  const std::string err_file = (tmp.path() / "stderr.txt").string();
  std::vector<std::string> argv_s = {python, script, format};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  argv_s.push_back("--out");
  argv_s.push_back(out);
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw IoError("cannot start the Python interpreter '" + python + "': " + std::strerror(rc) +
                  " (install the Debian packages " + kDebianPackages + ", or set DPGNN_PYTHON)");
  spdlog::info("running the {} converter: {} {} {} ...", format, python, script, format);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw IoError(std::string("waiting for the Python converter failed: ") + std::strerror(errno));
  }
  const std::string err = read_text(err_file);
  if (WIFSIGNALED(status))
    throw IoError("the Python converter was killed by signal " + std::to_string(WTERMSIG(status)) +
                  (err.empty() ? "" : ": " + last_line(err)));
  const int code = WEXITSTATUS(status);
  if (code != 0) {
    const std::string msg = last_line(err);
    switch (code) {
      case 2: throw UsageError(msg);
      case 3: throw DataError(msg);
      case 4: throw IoError(msg);
      case kExitMissingModule:
        throw IoError(msg + ": install the Debian packages " + kDebianPackages + " (scripts/install-deps.sh does), " +
                      "or set DPGNN_PYTHON to an interpreter that has numpy, scipy and h5py");
      default:
        throw Error("the Python converter failed (exit code " + std::to_string(code) + "):\n" + err, kExitInternal);
    }
  }
  if (!err.empty()) {
    std::istringstream in(err);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) spdlog::warn("converter: {}", line);
  }
  return read_raw_hdf5(out);
}

}  // namespace dpgnn::graph::import
