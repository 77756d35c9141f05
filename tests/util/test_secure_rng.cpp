// util/secure_rng: secrets from the OS, the pinned-seed derivation, secret files (mode
// 0600 from creation, atomic), and the XChaCha20 stream (determinism, independence of keys
// and nonces, uniformity of below()).
#include <gtest/gtest.h>
#include <sodium.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "dpgnn/util/error.h"
#include "dpgnn/util/secure_rng.h"
#include "test_support.h"

namespace dpgnn {
namespace {

std::vector<std::uint64_t> draw(const Secret& key, StreamPurpose purpose, std::uint64_t step, std::uint64_t sub,
                                std::size_t n) {
  SecureStream s(key, purpose, step, sub);
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = s.next_u64();
  return v;
}

TEST(SecureRng, OsSecretsDiffer) {
  std::set<std::array<std::uint8_t, kSecretBytes>> seen;
  for (int i = 0; i < 100; ++i) seen.insert(random_secret().bytes);
  EXPECT_EQ(seen.size(), 100u);
}

TEST(SecureRng, PinnedSeedsDeriveFixedDistinctSecrets) {
  EXPECT_EQ(secret_from_pinned_seed(7), secret_from_pinned_seed(7));
  EXPECT_NE(secret_from_pinned_seed(7), secret_from_pinned_seed(8));
  const Secret m = secret_from_pinned_seed(7);
  EXPECT_EQ(derive_secret(m, 1, "dpgnnois"), derive_secret(m, 1, "dpgnnois"));
  EXPECT_NE(derive_secret(m, 1, "dpgnnois"), derive_secret(m, 2, "dpgnbtch"));
  EXPECT_NE(derive_secret(m, 1, "dpgnnois"), derive_secret(m, 1, "dpgnbtch"));
  EXPECT_NE(derive_secret(m, 1, "dpgnnois"), m);
  EXPECT_THROW(derive_secret(m, 1, "short"), Error);
}

TEST(SecureRng, StreamIsAPureFunctionOfKeyPurposeStepAndSubstream) {
  const Secret k = secret_from_pinned_seed(1);
  // Long enough to cross several keystream refills.
  EXPECT_EQ(draw(k, StreamPurpose::noise, 5, 2, 3000), draw(k, StreamPurpose::noise, 5, 2, 3000));
  const auto base = draw(k, StreamPurpose::noise, 5, 2, 64);
  EXPECT_NE(base, draw(secret_from_pinned_seed(2), StreamPurpose::noise, 5, 2, 64));
  EXPECT_NE(base, draw(k, StreamPurpose::batch_without_replacement, 5, 2, 64));
  EXPECT_NE(base, draw(k, StreamPurpose::noise, 6, 2, 64));
  EXPECT_NE(base, draw(k, StreamPurpose::noise, 5, 3, 64));
}

TEST(SecureRng, StreamIsTheXChaCha20KeystreamForTheNonce) {
  // Independently: libsodium's one-shot crypto_stream_xchacha20 over 3 refills' worth of
  // bytes, with the nonce (purpose, step, substream) little-endian, read as 64-bit words.
  const Secret k = secret_from_pinned_seed(3);
  const std::size_t words = 3 * 512 + 7;
  std::vector<std::uint8_t> bytes(words * 8);
  std::uint8_t nonce[24] = {};
  const std::uint64_t parts[3] = {static_cast<std::uint64_t>(StreamPurpose::batch_poisson), 77, 5};
  for (int p = 0; p < 3; ++p)
    for (int b = 0; b < 8; ++b) nonce[8 * p + b] = static_cast<std::uint8_t>(parts[p] >> (8 * b));
  ASSERT_EQ(sodium_init() >= 0, true);
  crypto_stream_xchacha20(bytes.data(), bytes.size(), nonce, k.bytes.data());
  const auto v = draw(k, StreamPurpose::batch_poisson, 77, 5, words);
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t w = 0;
    for (int b = 0; b < 8; ++b) w |= static_cast<std::uint64_t>(bytes[8 * i + b]) << (8 * b);
    ASSERT_EQ(v[i], w) << "word " << i;
  }
}

TEST(SecureRng, BelowIsUniform) {
  // 7 outcomes, 70,000 draws: chi-square with 6 dof; critical value chi2.isf(1e-4, 6) = 27.86.
  SecureStream s(secret_from_pinned_seed(4), StreamPurpose::noise, 0);
  std::vector<int> counts(7);
  const int n = 70000;
  for (int i = 0; i < n; ++i) counts[s.below(std::uint64_t{7})]++;
  double chi = 0;
  for (int c : counts) chi += (c - n / 7.0) * (c - n / 7.0) / (n / 7.0);
  EXPECT_LT(chi, 27.86);
  // 128-bit bound: 3 * 2^64 + 5 has three nearly equal thirds by the top bits.
  using u128 = SecureStream::u128;
  const u128 big = (static_cast<u128>(3) << 64) + 5;
  std::vector<int> top(3);
  for (int i = 0; i < 30000; ++i) {
    const u128 x = s.below(big);
    ASSERT_LT(x, big);
    top[static_cast<int>(x >> 64)]++;
  }
  for (int c : top) EXPECT_NEAR(c, 10000, 400);  // 4.9 standard deviations
}

TEST(SecureRng, SecretFilesAreMode0600AndRoundTrip) {
  dpgnn::testing::TempDir tmp;
  const std::string path = tmp.file("noise_secret");
  const Secret s = random_secret();
  write_secret_file(path, s);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_EQ(read_secret_file(path), s);
  // Overwriting keeps the mode (a new 0600 file renamed over the old one).
  const Secret s2 = random_secret();
  write_secret_file(path, s2);
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_secret_file(path), s2);
  remove_secret_file(path);
  EXPECT_FALSE(std::filesystem::exists(path));
  remove_secret_file(path);  // absent: no error
}

TEST(SecureRng, MalformedSecretFilesAreRejectedByName) {
  dpgnn::testing::TempDir tmp;
  const std::string path = tmp.file("batch_secret");
  std::ofstream(path) << "1234\n";
  try {
    read_secret_file(path);
    FAIL() << "accepted a short secret";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  std::ofstream(path) << std::string(64, 'g') << "\n";
  EXPECT_THROW(read_secret_file(path), DataError);
  EXPECT_THROW(read_secret_file(tmp.file("absent")), IoError);
}

}  // namespace
}  // namespace dpgnn
