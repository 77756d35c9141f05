// The program's start (src/cli/main.cpp): dpgnn re-executes itself once with glibc's malloc
// tuned for the training step (util/system.h, kTunedMalloc), keeps a user's own tunables and
// honours the opt-out.
#include <gtest/gtest.h>

#include <string>

#include "dpgnn/util/system.h"
#include "test_support.h"

namespace dpgnn {
namespace {

using testing::run_command;

// The GLIBC_TUNABLES the running program saw, from its debug log ("" when unset).
std::string tunables_seen(const std::string& env) {
  const auto r = run_command("env -u GLIBC_TUNABLES -u DPGNN_MALLOC_DEFAULTS " + env + " DPGNN_LOG_LEVEL=debug " +
                             std::string(DPGNN_BUILD_DIR) + "/src/cli/dpgnn --version 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string key = "malloc: GLIBC_TUNABLES=";
  const auto at = r.output.find(key);
  if (at == std::string::npos) return "";
  const auto end = r.output.find('\n', at);
  return r.output.substr(at + key.size(), end - at - key.size());
}

TEST(TunedMalloc, TheProgramRunsWithTheTunedAllocatorByDefault) {
  EXPECT_EQ(tunables_seen(""), kTunedMalloc);
}

TEST(TunedMalloc, AUsersOwnTunablesAreKeptAndExtended) {
  EXPECT_EQ(tunables_seen("GLIBC_TUNABLES=glibc.malloc.arena_max=2"),
            std::string("glibc.malloc.arena_max=2:") + kTunedMalloc);
  // A user who chose the huge-page setting is not overridden.
  EXPECT_EQ(tunables_seen("GLIBC_TUNABLES=glibc.malloc.hugetlb=0"), "glibc.malloc.hugetlb=0");
}

TEST(TunedMalloc, DpgnnMallocDefaultsTurnsItOff) {
  EXPECT_EQ(tunables_seen("DPGNN_MALLOC_DEFAULTS=1"), "");
}

}  // namespace
}  // namespace dpgnn
