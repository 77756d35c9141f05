#include "dpgnn/util/digest.h"

#include <sodium.h>

#include <array>
#include <cstdio>
#include <stdexcept>

namespace dpgnn {
namespace {

std::string hex(const unsigned char* p, std::size_t n) {
  std::string s(2 * n, '0');
  static const char* digits = "0123456789abcdef";
  for (std::size_t i = 0; i < n; ++i) {
    s[2 * i] = digits[p[i] >> 4];
    s[2 * i + 1] = digits[p[i] & 15];
  }
  return s;
}

void ensure_sodium() {
  static const int ok = sodium_init();  // idempotent; selects the fastest implementations
  if (ok < 0) throw std::runtime_error("libsodium: sodium_init failed");
}

}  // namespace

std::string blake2b_digest(const std::string& bytes) {
  ensure_sodium();
  std::array<unsigned char, 32> out{};
  if (crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                         nullptr, 0) != 0)
    throw std::runtime_error("crypto_generichash failed");
  return "blake2b:" + hex(out.data(), out.size());
}

std::string secret_fingerprint(const Secret& secret, const std::string& label) {
  ensure_sodium();
  std::array<unsigned char, 16> out{};
  const std::string msg = "dpgnn secret fingerprint: " + label;
  if (crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(msg.data()), msg.size(),
                         secret.bytes.data(), secret.bytes.size()) != 0)
    throw std::runtime_error("crypto_generichash failed");
  return hex(out.data(), out.size());
}

}  // namespace dpgnn
