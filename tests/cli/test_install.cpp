// `cmake --install` gives a self-contained prefix: the binary, the launcher and the Python
// tools (found beside the binary, not in the build-time source tree), and `dpgnn --version`
// says which. The installed binary imports Cora and trains from there (issue 25 item 6).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_support.h"

namespace dpgnn {
namespace {

namespace fs = std::filesystem;
using testing::run_command;

TEST(Install, APrefixIsSelfContainedAndTrains) {
  testing::TempDir tmp;
  const std::string prefix = tmp.file("prefix");
  const auto install =
      run_command("cmake --install " + std::string(DPGNN_BUILD_DIR) + " --prefix " + prefix + " 2>&1");
  ASSERT_EQ(install.exit_code, 0) << install.output;
  for (const char* f : {"bin/dpgnn", "bin/dpgnn-mpirun", "share/dpgnn/tools/dpgnn_convert.py",
                        "share/dpgnn/tools/dpgnn_sweep.py"})
    EXPECT_TRUE(fs::exists(prefix + "/" + f)) << f;
  const std::string dpgnn = "env -u DPGNN_TOOLS_DIR " + prefix + "/bin/dpgnn";
  const auto version = run_command(dpgnn + " --version");
  ASSERT_EQ(version.exit_code, 0) << version.output;
  EXPECT_NE(version.output.find("dpgnn 0."), std::string::npos) << version.output;
  EXPECT_NE(version.output.find("(commit "), std::string::npos) << version.output;
  EXPECT_NE(version.output.find("tools: " + fs::canonical(prefix).string() + "/share/dpgnn/tools"), std::string::npos)
      << version.output;

  DPGNN_NEED_SHARED_DATA();
  const auto import = run_command(dpgnn + " import planetoid --dir " + testing::shared_dir() +
                                  "/data/cora/planetoid --name cora --out " + tmp.file("cora.h5") + " 2>&1");
  ASSERT_EQ(import.exit_code, 0) << import.output;
  std::ofstream(tmp.file("c.yaml")) << "method: drw\ndata: {dataset: " << tmp.file("cora.h5")
                                    << "}\ntrain: {max_steps: 3, threads: 1}\nprivacy: {target_epsilon: 8}\n";
  const auto train = run_command(dpgnn + " train --config " + tmp.file("c.yaml") + " --out " + tmp.file("run") + " 2>&1");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_TRUE(fs::exists(tmp.file("run") + "/summary.json"));
}

}  // namespace
}  // namespace dpgnn
