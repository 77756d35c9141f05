// Secrets and the cryptographically secure generator behind every choice the privacy
// accountant treats as hidden: the Gaussian noise and the batch selection (DESIGN.md 7).
//
// A Secret is 256 bits. Fresh secrets come from the operating system (libsodium's
// randombytes_buf: getrandom(2) / /dev/urandom). A pinned `privacy.noise_seed` is turned
// into a master secret by BLAKE2b (crypto_generichash) and the noise and batch secrets are
// derived from it with libsodium's KDF (crypto_kdf_derive_from_key, BLAKE2b keyed with a
// subkey id and an 8-byte context), so the two never share a key.
//
// SecureStream is the XChaCha20 keystream (Bernstein 2008, "ChaCha, a variant of Salsa20";
// XChaCha20 per draft-irtf-cfrg-xchacha) keyed by the secret, with the 192-bit nonce made of
// (purpose, step, substream) and the 64-bit block counter as the position. Every value is a
// pure function of (secret, purpose, step, substream, position): any rank and any resumed
// run reproduces it exactly, and without the secret it is indistinguishable from random.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace dpgnn {

constexpr std::size_t kSecretBytes = 32;

struct Secret {
  std::array<std::uint8_t, kSecretBytes> bytes{};
  bool operator==(const Secret& o) const { return bytes == o.bytes; }
  bool operator!=(const Secret& o) const { return bytes != o.bytes; }
};

// 256 bits from the operating system's secure random source.
Secret random_secret();
// The master secret of a pinned seed: BLAKE2b-256 of a fixed domain string and the seed
// (little-endian). Public knowledge of the seed gives the secret: such runs are not private.
Secret secret_from_pinned_seed(std::uint64_t seed);
// A subkey of `master` for `id` in `context` (exactly 8 characters), crypto_kdf_derive_from_key.
Secret derive_secret(const Secret& master, std::uint64_t id, const char* context);

// A keyed 128-bit pseudorandom function of `value`: SipHash-2-4 with 128-bit output
// (libsodium's crypto_shorthash_siphashx24; Aumasson & Bernstein 2012, "SipHash: a fast
// short-input PRF") keyed by the first 16 bytes of `key`. Without the key its values are
// indistinguishable from independent uniform 128-bit numbers (ties: probability n^2 / 2^129).
unsigned __int128 keyed_hash128(const Secret& key, std::uint64_t value);

// Writes the secret as 64 hex digits to `path` atomically with mode 0600: a temporary file
// created with open(O_CREAT | O_EXCL, 0600) (never readable by others, not even briefly),
// written, fsync'ed, renamed over `path`, and the directory fsync'ed. Throws IoError.
void write_secret_file(const std::string& path, const Secret& secret);
// Reads a file written by write_secret_file. Throws DataError naming the file when it is
// not 64 hex digits, IoError when it cannot be read.
Secret read_secret_file(const std::string& path);
// Overwrites the file's content with zeros, syncs, and removes it; no error when absent.
void remove_secret_file(const std::string& path);

// Stream purposes: distinct nonces, so noise and batches never read the same keystream.
enum class StreamPurpose : std::uint64_t {
  noise = 1,
  batch_without_replacement = 2,
  batch_poisson = 3,
  audit_coins = 4,  // dpgnn audit's canary coins (a fresh key of their own)
  appr_noise = 5,  // DPAR: the DP-APPR noise, one substream per source node (a key derived from the batch secret)
  label_response = 6,  // DPAR: the randomized response of the training labels, one substream per node
};

class SecureStream {
 public:
  SecureStream(const Secret& key, StreamPurpose purpose, std::uint64_t step, std::uint64_t substream = 0);
  ~SecureStream();
  SecureStream(const SecureStream&) = delete;
  SecureStream& operator=(const SecureStream&) = delete;

  // Inline: the exact discrete Gaussian (noise/discrete_gaussian.cpp) draws a dozen small values per
  // sample, where an out-of-line call per draw cost as much as the keystream itself.
  std::uint64_t next_u64() {
    if (pos_ == kWords) refill();
    return buf_[pos_++];
  }
  // b uniform random bits, 1 <= b <= 64, taken from a 64-bit reservoir refilled from the
  // stream (leftover bits are dropped when a request does not fit): small draws, such as the
  // Bernoulli coins of the discrete Gaussian, then cost a few bits instead of a word.
  std::uint64_t bits(int b) {
    if (b >= 64) return next_u64();
    if (reservoir_bits_ < b) {
      reservoir_ = next_u64();
      reservoir_bits_ = 64;
    }
    const std::uint64_t v = reservoir_ & ((std::uint64_t{1} << b) - 1);
    reservoir_ >>= b;
    reservoir_bits_ -= b;
    return v;
  }
  // Uniform in [0, n), unbiased (rejection on the smallest covering power of two); 0 if n <= 1.
  std::uint64_t below(std::uint64_t n);
  __extension__ typedef unsigned __int128 u128;
  u128 below(u128 n);
  // Uniform in [0, 1) with 53 random bits (for Poisson gaps, which need no exactness beyond
  // what a double gives: the choice of ids is the secret, not the float).
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

 private:
  void refill();
  static constexpr std::size_t kWords = 512;  // 4 KiB of keystream per refill (64 ChaCha blocks)
  // XChaCha20 = ChaCha20 keyed by HChaCha20(key, nonce[0:16]) with nonce[16:24]
  // (draft-irtf-cfrg-xchacha-03 section 2.3): the subkey is derived once here instead of
  // once per refill (a fifth of the keystream's cost); the bytes are the same.
  std::array<std::uint8_t, kSecretBytes> subkey_{};
  std::array<std::uint8_t, 24> nonce_{};
  std::uint64_t block_ = 0;
  std::array<std::uint64_t, kWords> buf_{};
  std::size_t pos_ = kWords;
  std::uint64_t reservoir_ = 0;
  int reservoir_bits_ = 0;
};

}  // namespace dpgnn
