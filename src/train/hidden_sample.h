// A hidden uniform sample of m of the U training nodes, the same on every rank, with nothing
// sized by U on any rank (DPAR's graph sampling, Zhang et al. Sec. 3.2; docs/privacy.md).
//
// The training nodes are numbered 0..U-1 in id order (their candidate index, public). Each
// gets a keyed 128-bit hash (util/secure_rng.h: SipHash, a PRF keyed from the batch secret);
// the sample is the m nodes with the smallest hashes. With the key secret the hashes are
// indistinguishable from iid uniform values, so the sample is a uniform m-subset (and the
// hash order within it a uniform random order: DPAR's sources are its first M nodes).
// Membership is one hash and one comparison with the m-th smallest hash, which the ranks
// find together by bisection over the 128-bit values: each rank counts its own training
// nodes' hashes below the midpoint (a contiguous candidate range per rank), 128 sums.
#pragma once

#include <cstdint>
#include <vector>

#include "dpgnn/util/secure_rng.h"

namespace dpgnn::dist {
class Communicator;
}

namespace dpgnn::train {

class HiddenSample {
 public:
  using Hash = unsigned __int128;

  // Collective. The `size` smallest-hash candidates of [0, universe); this rank hashes
  // [owned_begin, owned_end) (the ranks' ranges partition [0, universe)), once. `leading`
  // (0..size) asks also for the sample's first `leading` nodes in hash order: this rank's
  // are owned_leading(). Throws UsageError unless 1 <= size <= universe and leading <= size,
  // Error on a 128-bit hash tie at a threshold.
  static HiddenSample select(const Secret& key, std::int64_t universe, std::int64_t size, std::int64_t leading,
                             std::int64_t owned_begin, std::int64_t owned_end, dist::Communicator& comm);

  Hash hash(std::int64_t candidate) const { return keyed_hash128(key_, static_cast<std::uint64_t>(candidate)); }
  bool contains(std::int64_t candidate) const { return hash(candidate) <= threshold_; }
  // This rank's candidates among the sample's first `leading` in hash order (ascending ids).
  const std::vector<std::int64_t>& owned_leading() const { return owned_leading_; }

  std::int64_t size() const { return size_; }
  std::int64_t universe() const { return universe_; }

 private:
  Secret key_;
  std::int64_t universe_ = 0, size_ = 0;
  Hash threshold_ = 0;
  std::vector<std::int64_t> owned_leading_;
};

}  // namespace dpgnn::train
