// The run's secrets (see secrets.h).
#include "secrets.h"

#include <spdlog/spdlog.h>

#include "dpgnn/dist/communicator.h"

namespace dpgnn::train {
namespace fs = std::filesystem;

namespace {
// crypto_kdf contexts (exactly 8 characters) and subkey ids: the noise and the batch key
// are independent subkeys of one master key.
constexpr const char* kNoiseContext = "dpgnnois";
constexpr const char* kBatchContext = "dpgnbtch";
constexpr std::uint64_t kNoiseId = 1, kBatchId = 2;
// A distinct domain for the public train.seed of non-private runs.
constexpr std::uint64_t kPublicSeedDomain = 0x7075626c69635f73ULL;  // "public_s"
}  // namespace

fs::path noise_secret_file(const fs::path& run_dir) { return run_dir / "noise_secret"; }
fs::path batch_secret_file(const fs::path& run_dir) { return run_dir / "batch_secret"; }

RunSecrets pinned_secrets(std::uint64_t seed) {
  const Secret master = secret_from_pinned_seed(seed);
  RunSecrets s;
  s.noise = derive_secret(master, kNoiseId, kNoiseContext);
  s.batch = derive_secret(master, kBatchId, kBatchContext);
  s.pinned = true;
  return s;
}

bool secrets_available(const fs::path& run_dir, bool pinned) {
  return pinned || (fs::exists(noise_secret_file(run_dir)) && fs::exists(batch_secret_file(run_dir)));
}

RunSecrets rank0_secrets(bool is_private, const std::optional<std::uint64_t>& pinned_seed, std::uint64_t train_seed,
                         const fs::path& run_dir, bool reuse_kept) {
  if (!is_private) {
    RunSecrets s;
    s.batch = derive_secret(secret_from_pinned_seed(train_seed ^ kPublicSeedDomain), kBatchId, kBatchContext);
    s.pinned = true;
    return s;
  }
  if (pinned_seed) {
    spdlog::warn("privacy.noise_seed is pinned: the noise and the batches are reproducible from the config, so "
                 "this run is NOT private (summary.json says private: false); for experiments only");
    return pinned_secrets(*pinned_seed);
  }
  RunSecrets s;
  if (reuse_kept && secrets_available(run_dir, false)) {
    s.noise = read_secret_file(noise_secret_file(run_dir).string());
    s.batch = read_secret_file(batch_secret_file(run_dir).string());
    return s;
  }
  s.noise = random_secret();
  s.batch = random_secret();
  write_secret_file(noise_secret_file(run_dir).string(), s.noise);
  write_secret_file(batch_secret_file(run_dir).string(), s.batch);
  return s;
}

std::optional<RunSecrets> reproducible_secrets(bool is_private, const std::optional<std::uint64_t>& pinned_seed,
                                               std::uint64_t train_seed, const fs::path& run_dir) {
  if (!is_private || pinned_seed) return rank0_secrets(is_private, pinned_seed, train_seed, run_dir, true);
  if (!secrets_available(run_dir, false)) return std::nullopt;
  RunSecrets s;
  s.noise = read_secret_file(noise_secret_file(run_dir).string());
  s.batch = read_secret_file(batch_secret_file(run_dir).string());
  return s;
}

RunSecrets draw_secrets() {
  RunSecrets s;
  s.noise = random_secret();
  s.batch = random_secret();
  return s;
}

void keep_secrets(const RunSecrets& s, const fs::path& run_dir) {
  write_secret_file(noise_secret_file(run_dir).string(), s.noise);
  write_secret_file(batch_secret_file(run_dir).string(), s.batch);
}

RunSecrets fresh_secrets(const fs::path& run_dir) {
  RunSecrets s = draw_secrets();
  keep_secrets(s, run_dir);
  return s;
}

void share_batch_secret(RunSecrets& secrets, dist::Communicator& comm) {
  comm.broadcast(secrets.batch.bytes.data(), secrets.batch.bytes.size(), 0);
}

void remove_secret_files(const fs::path& run_dir) {
  remove_secret_file(noise_secret_file(run_dir).string());
  remove_secret_file(batch_secret_file(run_dir).string());
}

}  // namespace dpgnn::train
