// An exception on one rank ends the whole MPI job with a non-zero exit instead of leaving
// the other ranks waiting. Launches abort_probe with `mpiexec -n 2` (rank 1 throws while
// rank 0 waits in a barrier) and requires a non-zero exit well within a timeout; the same
// probe without a failing rank must exit 0, so the failure is the one we caused.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Outcome {
  bool timed_out = false;
  int exit_status = -1;  // when exited normally
  double seconds = 0;
};

// Runs argv in its own process group; kills the group after `timeout`.
Outcome run_with_timeout(std::vector<std::string> args, std::chrono::seconds timeout) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Outcome out;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() - start > timeout) {
      out.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) out.exit_status = WEXITSTATUS(status);
  return out;
}

TEST(AbortOnError, AFailingRankEndsTheJobNonZeroInsteadOfHanging) {
  const Outcome out = run_with_timeout(
      {DPGNN_MPIEXEC, "-n", "2", "--oversubscribe", DPGNN_ABORT_PROBE, "--fail-rank", "1"},
      std::chrono::seconds(60));
  EXPECT_FALSE(out.timed_out) << "the job hung: rank 0 kept waiting for the failed rank 1";
  EXPECT_NE(out.exit_status, 0) << "exit status after rank 1 failed";
  EXPECT_NE(out.exit_status, 127) << "could not start " << DPGNN_MPIEXEC;
}

TEST(AbortOnError, TheProbeExitsZeroWhenNoRankFails) {
  const Outcome out = run_with_timeout({DPGNN_MPIEXEC, "-n", "2", "--oversubscribe", DPGNN_ABORT_PROBE},
                                       std::chrono::seconds(60));
  EXPECT_FALSE(out.timed_out);
  EXPECT_EQ(out.exit_status, 0);
}

}  // namespace
