// The run's secrets (DESIGN.md 7, issue 13): the noise secret (rank 0 only) and the batch
// secret (broadcast once to every rank), 256 bits each.
//   - fresh run: both from the OS (random_secret), written 0600 to the run directory
//     (noise_secret, batch_secret) so that a resume can replay released steps exactly;
//   - resume: the kept files (resume_guard.h refuses a replay without them);
//   - pinned privacy.noise_seed: both derived from it (BLAKE2b, then the libsodium KDF with
//     contexts "dpgnnois" / "dpgnbtch"), no files: the run is reproducible and NOT private;
//   - non-private methods: nothing is hidden; the batch key derives from train.seed.
// The files are removed (zeroed, then unlinked) when the run ends.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "dpgnn/util/secure_rng.h"

namespace dpgnn::dist {
class Communicator;
}

namespace dpgnn::train {

struct RunSecrets {
  Secret noise;  // meaningful at rank 0 only
  Secret batch;  // the same on every rank after share_batch_secret
  bool pinned = false;
};

std::filesystem::path noise_secret_file(const std::filesystem::path& run_dir);
std::filesystem::path batch_secret_file(const std::filesystem::path& run_dir);

// Both derived from a pinned seed (no files), as every rank of a pinned run computes them.
RunSecrets pinned_secrets(std::uint64_t seed);

// True when the run can reproduce its secrets: pinned, or both files are in run_dir.
bool secrets_available(const std::filesystem::path& run_dir, bool pinned);

// Rank 0. `is_private` false: the batch key derives from the public train_seed. Otherwise
// from the pinned seed, or the kept files when `reuse_kept` and both exist, or fresh from
// the OS (then written 0600 to run_dir).
RunSecrets rank0_secrets(bool is_private, const std::optional<std::uint64_t>& pinned_seed, std::uint64_t train_seed,
                         const std::filesystem::path& run_dir, bool reuse_kept);

// The secrets this run can reproduce without writing anything: the public batch key
// (non-private), the pinned ones, or the kept files; nothing when a private run's files are gone.
std::optional<RunSecrets> reproducible_secrets(bool is_private, const std::optional<std::uint64_t>& pinned_seed,
                                               std::uint64_t train_seed, const std::filesystem::path& run_dir);
// Fresh secrets from the OS, written 0600 to run_dir.
RunSecrets fresh_secrets(const std::filesystem::path& run_dir);
// Fresh secrets from the OS, not yet written; keep_secrets writes them 0600 to run_dir.
RunSecrets draw_secrets();
void keep_secrets(const RunSecrets& secrets, const std::filesystem::path& run_dir);

// Broadcasts the batch secret from rank 0 (one 32-byte broadcast); the noise secret stays.
void share_batch_secret(RunSecrets& secrets, dist::Communicator& comm);

// Removes the kept secret files (the run is over: nothing left to replay).
void remove_secret_files(const std::filesystem::path& run_dir);

}  // namespace dpgnn::train
