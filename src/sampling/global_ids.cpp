// Prefix offsets over per-part subgraph counts (see global_ids.h).
#include "dpgnn/sampling/global_ids.h"

#include <algorithm>
#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn::sampling {

GlobalIds::GlobalIds(const std::vector<std::int64_t>& counts) : offsets_{0} {
  if (counts.empty()) throw UsageError("global subgraph ids: no parts (empty list of counts)");
  for (std::size_t p = 0; p < counts.size(); ++p) {
    if (counts[p] < 0)
      throw UsageError("global subgraph ids: part " + std::to_string(p) + " has a negative count " +
                       std::to_string(counts[p]));
    offsets_.push_back(offsets_.back() + counts[p]);
  }
}

std::int64_t GlobalIds::offset(std::int64_t part) const {
  if (part < 0 || part >= num_parts())
    throw UsageError("global subgraph ids: part " + std::to_string(part) + " outside [0, " +
                     std::to_string(num_parts()) + ")");
  return offsets_[part];
}

std::int64_t GlobalIds::count(std::int64_t part) const {
  return offsets_[part + 1] - offset(part);
}

std::int64_t GlobalIds::owner(std::int64_t gid) const {
  if (gid < 0 || gid >= total())
    throw UsageError("global subgraph id " + std::to_string(gid) + " outside [0, " +
                     std::to_string(total()) + ")");
  // The last part whose offset is <= gid (empty parts share their offset with the next).
  const auto it = std::upper_bound(offsets_.begin(), offsets_.end(), gid);
  return static_cast<std::int64_t>(it - offsets_.begin()) - 1;
}

std::int64_t GlobalIds::local_index(std::int64_t gid) const { return gid - offsets_[owner(gid)]; }

std::int64_t GlobalIds::global_id(std::int64_t part, std::int64_t local) const {
  if (local < 0 || local >= count(part))
    throw UsageError("global subgraph ids: local index " + std::to_string(local) + " outside [0, " +
                     std::to_string(count(part)) + ") of part " + std::to_string(part));
  return offsets_[part] + local;
}

}  // namespace dpgnn::sampling
