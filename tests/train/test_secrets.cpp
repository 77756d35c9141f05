// train/secrets: where a run's noise and batch secrets come from (issue 13).
#include "secrets.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "test_support.h"

namespace dpgnn::train {
namespace {

namespace fs = std::filesystem;

TEST(RunSecrets, APinnedSeedGivesFixedIndependentNoiseAndBatchKeysAndNoFiles) {
  dpgnn::testing::TempDir tmp;
  const RunSecrets a = rank0_secrets(true, 7, 1, tmp.path(), false);
  const RunSecrets b = rank0_secrets(true, 7, 2, tmp.path(), false);  // train.seed plays no part
  EXPECT_TRUE(a.pinned);
  EXPECT_EQ(a.noise, b.noise);
  EXPECT_EQ(a.batch, b.batch);
  EXPECT_NE(a.noise, a.batch);
  EXPECT_NE(a.noise, rank0_secrets(true, 8, 1, tmp.path(), false).noise);
  EXPECT_FALSE(fs::exists(noise_secret_file(tmp.path())));
  EXPECT_TRUE(secrets_available(tmp.path(), true));
  EXPECT_FALSE(secrets_available(tmp.path(), false));
}

TEST(RunSecrets, AnUnpinnedRunDrawsFreshSecretsKeepsThemPrivateAndReusesThemOnResume) {
  dpgnn::testing::TempDir tmp;
  const RunSecrets a = rank0_secrets(true, std::nullopt, 1, tmp.path(), false);
  const RunSecrets b = rank0_secrets(true, std::nullopt, 1, tmp.path(), false);  // a new run: new secrets
  EXPECT_FALSE(a.pinned);
  EXPECT_NE(a.noise, b.noise);
  EXPECT_NE(a.batch, b.batch);
  EXPECT_NE(b.noise, b.batch);
  for (const auto& f : {noise_secret_file(tmp.path()), batch_secret_file(tmp.path())}) {
    struct stat st {};
    ASSERT_EQ(::stat(f.c_str(), &st), 0) << f;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << f;
  }
  EXPECT_TRUE(secrets_available(tmp.path(), false));
  const RunSecrets resumed = rank0_secrets(true, std::nullopt, 1, tmp.path(), true);
  EXPECT_EQ(resumed.noise, b.noise);
  EXPECT_EQ(resumed.batch, b.batch);
  remove_secret_files(tmp.path());
  EXPECT_FALSE(fs::exists(noise_secret_file(tmp.path())));
  EXPECT_FALSE(fs::exists(batch_secret_file(tmp.path())));
  EXPECT_FALSE(secrets_available(tmp.path(), false));
}

TEST(RunSecrets, NonPrivateMethodsKeyBatchesByTheirPublicSeed) {
  dpgnn::testing::TempDir tmp;
  const RunSecrets a = rank0_secrets(false, std::nullopt, 5, tmp.path(), false);
  EXPECT_EQ(a.batch, rank0_secrets(false, std::nullopt, 5, tmp.path(), false).batch);
  EXPECT_NE(a.batch, rank0_secrets(false, std::nullopt, 6, tmp.path(), false).batch);
  EXPECT_NE(a.batch, pinned_secrets(5).batch) << "a public train.seed never equals a pinned noise seed's key";
  EXPECT_FALSE(fs::exists(batch_secret_file(tmp.path())));
}

}  // namespace
}  // namespace dpgnn::train
