// Helpers shared by tests: temporary directories and running the dpgnn binary.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

// By its path from here: some test binaries (test_install, test_launch) link no dpgnn library and
// have no include/ on their include path.
#include "../include/dpgnn/util/remove_tree.h"

namespace dpgnn::testing {

// A fresh directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("dpgnn-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    dpgnn::remove_tree(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The message of the E that `fn` throws, or "" when it throws nothing (an exception of
// another type propagates and fails the test).
template <typename E, typename Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

struct CommandResult {
  int exit_code = -1;      // valid when !signaled
  bool signaled = false;   // killed by a signal (a crash)
  std::string output;      // stdout and stderr together
};

// Runs a shell command line, capturing stdout+stderr.
inline CommandResult run_command(const std::string& cmd) {
  CommandResult r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(p);
  if (WIFSIGNALED(status)) {
    r.signaled = true;
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
    // The shell reports a child killed by signal N as exit status 128 + N.
    r.signaled = r.exit_code > 128 && r.exit_code < 160;
  }
  return r;
}

// Runs the dpgnn binary built with the tests.
inline CommandResult run_dpgnn(const std::string& args) {
  return run_command(std::string(DPGNN_BINARY) + " " + args);
}

inline std::string shared_dir() { return DPGNN_SHARED_DIR; }
inline bool shared_data_available() {
  return std::filesystem::exists(std::string(DPGNN_SHARED_DIR) + "/data");
}
// CI (`CI=true bash .ci/run`) always has ../shared beside its clean clone: there a test that needs
// the shared data and finds none fails instead of skipping, so a lost folder cannot pass quietly.
inline bool shared_data_required() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && *ci != '\0' && std::string(ci) != "false" && std::string(ci) != "0";
}

}  // namespace dpgnn::testing

// In a test (or a void helper it calls) that found what it needs from ../shared missing: fails
// under CI (shared_data_required), skips elsewhere, with `what` (a stream expression) as the
// reason. Needs <gtest/gtest.h>.
#define DPGNN_SKIP_OR_FAIL_UNDER_CI(what)                                  \
  do {                                                                     \
    if (::dpgnn::testing::shared_data_required())                          \
      FAIL() << what << ", and CI is set: CI must have it";                \
    GTEST_SKIP() << what;                                                  \
  } while (0)

// In a test (or a void helper it calls) that reads ../shared/data.
#define DPGNN_NEED_SHARED_DATA()                                                                        \
  do {                                                                                                  \
    if (!::dpgnn::testing::shared_data_available())                                                     \
      DPGNN_SKIP_OR_FAIL_UNDER_CI(::dpgnn::testing::shared_dir()                                        \
                                  << "/data not present (the shared datasets are not part of the repository)"); \
  } while (0)
