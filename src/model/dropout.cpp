// Counter-based dropout masks (see include/dpgnn/model/dropout.h for why).
//
// Mask bit of (node key k, feature j) in layer l at step t with seed S:
//   base      = splitmix64(splitmix64(S ^ splitmix64(t)) ^ l)          (host, 64-bit)
//   row(k)    = hash32(hash32(lo32(k) ^ lo32(base)) ^ hi32(k) ^ hi32(base))
//   col(j)    = hash32(j ^ mix32(base))
//   u(k, j)   = hash32(row(k) ^ col(j))        in [0, 2^32)
//   keep      = u >= p * 2^32
// splitmix64 is Steele, Lea & Flood (2014); hash32 is the xorshift-multiply mixer with
// constants 0x21f0aaad / 0x735a2d97 (C. Wellons, "hash-prospector", improved lowbias32).
#include "dpgnn/model/dropout.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "dpgnn/util/error.h"

namespace dpgnn::model {
namespace {

constexpr std::int64_t kMask32 = std::int64_t{0xffffffff};

std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

at::Tensor hash32(const at::Tensor& x_in) {
  // Every operand < 2^32 and every multiplier < 2^31: products stay below 2^63.
  at::Tensor x = x_in.bitwise_xor(x_in.bitwise_right_shift(16));
  x.mul_(std::int64_t{0x21f0aaad}).bitwise_and_(kMask32);
  x.bitwise_xor_(x.bitwise_right_shift(15));
  x.mul_(std::int64_t{0x735a2d97}).bitwise_and_(kMask32);
  x.bitwise_xor_(x.bitwise_right_shift(15));
  return x;
}

at::Tensor dropout_mask(const at::Tensor& node_key, std::int64_t num_features, double p,
                        const DropoutKey& key, std::int64_t layer, c10::ScalarType dtype) {
  if (!(p >= 0.0 && p < 1.0)) {
    throw UsageError("model.dropout: must be in [0, 1), got " + std::to_string(p));
  }
  const std::uint64_t base =
      splitmix64(splitmix64(key.seed ^ splitmix64(static_cast<std::uint64_t>(key.step))) ^
                 static_cast<std::uint64_t>(layer));
  const auto base_lo = static_cast<std::int64_t>(base & 0xffffffffULL);
  const auto base_hi = static_cast<std::int64_t>(base >> 32);
  const auto base_col = static_cast<std::int64_t>(splitmix64(base) & 0xffffffffULL);

  const at::Tensor key_lo = node_key.bitwise_and(kMask32);
  const at::Tensor key_hi = node_key.bitwise_right_shift(32).bitwise_and(kMask32);
  at::Tensor row = hash32(key_lo.bitwise_xor(base_lo));
  row = hash32(row.bitwise_xor(key_hi).bitwise_xor_(base_hi));                     // [n]
  const at::Tensor col =
      hash32(at::arange(num_features, node_key.options()).bitwise_xor_(base_col));  // [d]
  const auto threshold = static_cast<std::int64_t>(std::floor(p * 4294967296.0));
  // The int64 hash temporaries are 8 bytes per entry: build the mask in row chunks of about
  // 2^22 entries so that dropout on a wide input (e.g. 602 Reddit features) stays cheap.
  const std::int64_t n = node_key.size(0);
  at::Tensor mask = at::empty({n, num_features}, node_key.options().dtype(dtype));
  const std::int64_t chunk = std::max<std::int64_t>(1, (std::int64_t{1} << 22) / std::max<std::int64_t>(1, num_features));
  for (std::int64_t r0 = 0; r0 < n; r0 += chunk) {
    const std::int64_t len = std::min(chunk, n - r0);
    const at::Tensor u = hash32(row.narrow(0, r0, len).unsqueeze(1).bitwise_xor(col.unsqueeze(0)));  // [len, d]
    mask.narrow(0, r0, len).copy_(u.ge(threshold));
  }
  return mask.mul_(1.0 / (1.0 - p));
}

at::Tensor keyed_dropout(const at::Tensor& h, const at::Tensor& node_key, double p,
                         const DropoutKey& key, std::int64_t layer) {
  if (p == 0.0) return h;
  return h * dropout_mask(node_key, h.size(1), p, key, layer, h.scalar_type());
}

}  // namespace dpgnn::model
