// Secrets and the XChaCha20 keystream (see secure_rng.h). Everything cryptographic is
// libsodium's (Debian libsodium-dev); this file only arranges keys, nonces and files.
#include "dpgnn/util/secure_rng.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dpgnn/util/error.h"

namespace dpgnn {
namespace {

void ensure_sodium() {
  static const int ok = sodium_init();
  if (ok < 0) throw IoError("libsodium: sodium_init failed (no secure random source?)");
}

void put_le64(std::uint8_t* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

Secret random_secret() {
  ensure_sodium();
  Secret s;
  randombytes_buf(s.bytes.data(), s.bytes.size());
  return s;
}

Secret secret_from_pinned_seed(std::uint64_t seed) {
  ensure_sodium();
  static const char kDomain[] = "dpgnn pinned seed v1";
  std::uint8_t msg[sizeof(kDomain) + 8];
  std::memcpy(msg, kDomain, sizeof(kDomain));
  put_le64(msg + sizeof(kDomain), seed);
  Secret s;
  crypto_generichash(s.bytes.data(), s.bytes.size(), msg, sizeof(msg), nullptr, 0);
  return s;
}

Secret derive_secret(const Secret& master, std::uint64_t id, const char* context) {
  ensure_sodium();
  static_assert(crypto_kdf_KEYBYTES == kSecretBytes, "libsodium KDF key size");
  if (std::strlen(context) != crypto_kdf_CONTEXTBYTES)
    throw Error(std::string("derive_secret: context '") + context + "' must have 8 characters", kExitInternal);
  Secret s;
  if (crypto_kdf_derive_from_key(s.bytes.data(), s.bytes.size(), id, context, master.bytes.data()) != 0)
    throw Error("derive_secret: crypto_kdf_derive_from_key failed", kExitInternal);
  return s;
}

unsigned __int128 keyed_hash128(const Secret& key, std::uint64_t value) {
  ensure_sodium();
  static_assert(crypto_shorthash_siphashx24_KEYBYTES <= kSecretBytes, "SipHash key size");
  unsigned char in[8], out[crypto_shorthash_siphashx24_BYTES];
  for (int i = 0; i < 8; ++i) in[i] = static_cast<unsigned char>(value >> (8 * i));  // little-endian
  crypto_shorthash_siphashx24(out, in, sizeof in, key.bytes.data());
  unsigned __int128 h = 0;
  for (int i = 15; i >= 0; --i) h = (h << 8) | out[i];
  return h;
}

void write_secret_file(const std::string& path, const Secret& secret) {
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());  // a leftover of a crash; O_EXCL below then guarantees a fresh 0600 file
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, S_IRUSR | S_IWUSR);
  if (fd < 0) throw IoError(tmp + ": cannot create secret file: " + errno_text());
  char hex[2 * kSecretBytes + 2];
  sodium_bin2hex(hex, sizeof(hex) - 1, secret.bytes.data(), secret.bytes.size());
  hex[2 * kSecretBytes] = '\n';
  hex[2 * kSecretBytes + 1] = '\0';
  // umask cannot widen 0600, but an inherited ACL could: set it explicitly on the descriptor.
  const bool ok = ::fchmod(fd, S_IRUSR | S_IWUSR) == 0 &&
                  ::write(fd, hex, 2 * kSecretBytes + 1) == static_cast<ssize_t>(2 * kSecretBytes + 1) &&
                  ::fsync(fd) == 0;
  const std::string err = errno_text();
  sodium_memzero(hex, sizeof(hex));
  ::close(fd);
  if (!ok) {
    ::unlink(tmp.c_str());
    throw IoError(tmp + ": cannot write secret file: " + err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string e = errno_text();
    ::unlink(tmp.c_str());
    throw IoError(path + ": cannot install secret file: " + e);
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

Secret read_secret_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError(path + ": cannot read secret file");
  std::string text;
  std::getline(in, text);
  Secret s;
  std::size_t len = 0;
  const char* end = nullptr;
  if (text.size() != 2 * kSecretBytes ||
      sodium_hex2bin(s.bytes.data(), s.bytes.size(), text.data(), text.size(), nullptr, &len, &end) != 0 ||
      len != kSecretBytes)
    throw DataError(path, "", "not a secret file (expected 64 hex digits on one line)");
  sodium_memzero(text.data(), text.size());
  return s;
}

void remove_secret_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      std::string zeros(static_cast<std::size_t>(st.st_size), '\0');
      if (::write(fd, zeros.data(), zeros.size()) >= 0) ::fsync(fd);
    }
    ::close(fd);
  }
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

SecureStream::SecureStream(const Secret& key, StreamPurpose purpose, std::uint64_t step, std::uint64_t substream) {
  ensure_sodium();
  static_assert(crypto_stream_xchacha20_KEYBYTES == kSecretBytes, "XChaCha20 key size");
  static_assert(crypto_stream_xchacha20_NONCEBYTES == 24, "XChaCha20 nonce size");
  put_le64(nonce_.data(), static_cast<std::uint64_t>(purpose));
  put_le64(nonce_.data() + 8, step);
  put_le64(nonce_.data() + 16, substream);
  // What crypto_stream_xchacha20_xor_ic does on every call (libsodium's xchacha20 stream).
  static_assert(crypto_core_hchacha20_OUTPUTBYTES == kSecretBytes, "HChaCha20 output size");
  crypto_core_hchacha20(subkey_.data(), nonce_.data(), key.bytes.data(), nullptr);
}

SecureStream::~SecureStream() {
  sodium_memzero(subkey_.data(), subkey_.size());
  sodium_memzero(buf_.data(), sizeof(buf_));
}

void SecureStream::refill() {
  // The keystream itself: XChaCha20 of zeros from block counter block_ (ChaCha20 with the
  // 64-bit nonce nonce_[16:24] under the HChaCha20 subkey; SecureRng.StreamIsTheXChaCha20KeystreamForTheNonce
  // checks it against libsodium's one-shot XChaCha20).
  static const std::array<std::uint8_t, kWords * 8> kZeros{};
  std::uint8_t* out = reinterpret_cast<std::uint8_t*>(buf_.data());
  crypto_stream_chacha20_xor_ic(out, kZeros.data(), kZeros.size(), nonce_.data() + 16, block_, subkey_.data());
  block_ += kWords * 8 / 64;
  pos_ = 0;
}

std::uint64_t SecureStream::below(std::uint64_t n) {
  if (n <= 1) return 0;
  const int b = 64 - __builtin_clzll(n - 1);
  for (;;) {
    const std::uint64_t x = bits(b);
    if (x < n) return x;
  }
}

SecureStream::u128 SecureStream::below(u128 n) {
  if (n <= 1) return 0;
  if ((n >> 64) == 0) return below(static_cast<std::uint64_t>(n));
  const u128 m1 = n - 1;
  const int high_bits = 64 - __builtin_clzll(static_cast<std::uint64_t>(m1 >> 64));
  for (;;) {
    const u128 high = bits(high_bits);
    const u128 x = (high << 64) | next_u64();
    if (x < n) return x;
  }
}

}  // namespace dpgnn
