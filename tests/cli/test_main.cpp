// The program's start (src/cli/main.cpp, command.h): `train`, `predict` and `audit` restart
// themselves once, before MPI, with glibc's malloc tuned for their steps (util/system.h,
// kTunedMalloc); a user's own tunables are kept, DPGNN_MALLOC_DEFAULTS=1 turns it off, and the
// other commands start once.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "dpgnn/util/system.h"
#include "test_support.h"

namespace dpgnn {
namespace {

using testing::run_command;

class TunedMalloc : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    const auto r = run_command(dpgnn() + " synth --nodes 60 --avg-degree 4 --classes 3 --features 5 --homophily 0.8 "
                               "--seed 1 --out " + dir_->file("g.h5") + " 2>&1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::ofstream(dir_->file("c.yaml")) << "method: drw\ndata: {dataset: " << dir_->file("g.h5")
                                        << "}\ntrain: {max_steps: 2, threads: 1}\nprivacy: {target_epsilon: 8}\n";
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string dpgnn() { return std::string(DPGNN_BUILD_DIR) + "/src/cli/dpgnn"; }

  // The GLIBC_TUNABLES the program ran with last, from its debug log ("" when unset).
  static std::string tunables_seen(const std::string& env, const std::string& command) {
    const auto r = run_command("env -u GLIBC_TUNABLES -u DPGNN_MALLOC_DEFAULTS " + env +
                               " DPGNN_LOG_LEVEL=debug DPGNN_PROGRESS=0 " + dpgnn() + " " + command + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const std::string key = "malloc: GLIBC_TUNABLES=";
    const auto at = r.output.rfind(key);
    if (at == std::string::npos) return "";
    const auto end = r.output.find('\n', at);
    return r.output.substr(at + key.size(), end - at - key.size());
  }
  static std::string dry_run() { return "train --dry-run --config " + dir_->file("c.yaml"); }

  static testing::TempDir* dir_;
};
testing::TempDir* TunedMalloc::dir_ = nullptr;

TEST_F(TunedMalloc, TrainingRunsWithTheTunedAllocatorByDefault) {
  EXPECT_EQ(tunables_seen("", dry_run()), kTunedMalloc);
  EXPECT_EQ(tunables_seen("", "--version"), "") << "a command without steps starts once";
  EXPECT_EQ(tunables_seen("", "train --help"), "") << "help is printed before the restart";
}

TEST_F(TunedMalloc, AUsersOwnTunablesAreKeptAndExtended) {
  EXPECT_EQ(tunables_seen("GLIBC_TUNABLES=glibc.malloc.arena_max=2", dry_run()),
            std::string("glibc.malloc.arena_max=2:") + kTunedMalloc);
  // A user who chose the huge-page setting is not overridden.
  EXPECT_EQ(tunables_seen("GLIBC_TUNABLES=glibc.malloc.hugetlb=0", dry_run()), "glibc.malloc.hugetlb=0");
}

TEST_F(TunedMalloc, DpgnnMallocDefaultsTurnsItOff) {
  EXPECT_EQ(tunables_seen("DPGNN_MALLOC_DEFAULTS=1", dry_run()), "");
}

}  // namespace
}  // namespace dpgnn
