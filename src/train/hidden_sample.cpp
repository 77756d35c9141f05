// The hidden uniform sample of training nodes (hidden_sample.h).
#include "hidden_sample.h"

#include <algorithm>
#include <string>
#include <vector>

#include "dpgnn/dist/communicator.h"
#include "dpgnn/util/error.h"

namespace dpgnn::train {
namespace {

using Hash = HiddenSample::Hash;

// The smallest threshold t with #{hashes <= t} >= count over all ranks (count >= 1), by
// bisection on [0, 2^128 - 1]; `mine` is this rank's sorted hashes.
Hash kth_smallest(const std::vector<Hash>& mine, std::int64_t count, dist::Communicator& comm) {
  Hash lo = 0, hi = ~Hash{0};  // invariant: #(<= hi) >= count; the answer is in [lo, hi]
  while (lo < hi) {
    const Hash mid = lo + (hi - lo) / 2;
    std::int64_t below = std::upper_bound(mine.begin(), mine.end(), mid) - mine.begin();
    comm.allreduce_sum(&below, 1);
    if (below >= count)
      hi = mid;
    else
      lo = mid + 1;
  }
  std::int64_t at = std::upper_bound(mine.begin(), mine.end(), lo) - mine.begin();
  comm.allreduce_sum(&at, 1);
  if (at != count)  // two candidates share the threshold's 128-bit hash: probability < U^2 / 2^129
    throw Error("hidden sample: a 128-bit hash tie at the threshold (" + std::to_string(at) + " nodes for " +
                    std::to_string(count) + "); rerun with fresh secrets",
                kExitInternal);
  return lo;
}

}  // namespace

HiddenSample HiddenSample::select(const Secret& key, std::int64_t universe, std::int64_t size, std::int64_t leading,
                                  std::int64_t owned_begin, std::int64_t owned_end, dist::Communicator& comm) {
  if (universe < 1 || size < 1 || size > universe)
    throw UsageError("hidden sample: need 1 <= sample size <= training nodes, got " + std::to_string(size) + " of " +
                     std::to_string(universe));
  if (leading < 0 || leading > size)
    throw UsageError("hidden sample: " + std::to_string(leading) + " leading nodes of a sample of " +
                     std::to_string(size));
  if (owned_begin < 0 || owned_end < owned_begin || owned_end > universe)
    throw Error("hidden sample: owned range outside the universe", kExitInternal);
  HiddenSample s;
  s.key_ = key;
  s.universe_ = universe;
  s.size_ = size;
  // This rank's hashes, computed once, sorted with their candidates.
  std::vector<std::pair<Hash, std::int64_t>> owned;
  owned.reserve(static_cast<std::size_t>(owned_end - owned_begin));
  for (std::int64_t c = owned_begin; c < owned_end; ++c) owned.emplace_back(s.hash(c), c);
  std::sort(owned.begin(), owned.end());
  std::vector<Hash> hashes(owned.size());
  for (std::size_t i = 0; i < owned.size(); ++i) hashes[i] = owned[i].first;
  s.threshold_ = kth_smallest(hashes, size, comm);
  if (leading > 0) {
    const Hash below = kth_smallest(hashes, leading, comm);
    for (const auto& [h, c] : owned) {
      if (h > below) break;
      s.owned_leading_.push_back(c);
    }
    std::sort(s.owned_leading_.begin(), s.owned_leading_.end());
  }
  return s;
}

}  // namespace dpgnn::train
