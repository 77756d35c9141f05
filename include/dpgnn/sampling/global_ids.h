// The global id space of all subgraphs of all parts (DESIGN.md 3).
//
// Batches are drawn uniformly from all M subgraphs of the whole graph, not per rank, so
// every rank needs the same numbering: part p's subgraphs get the global ids
// [offset(p), offset(p) + count(p)) in part order. The trainer all-gathers the per-part
// counts and builds this on every rank; it is a pure function of the counts.
#pragma once

#include <cstdint>
#include <vector>

namespace dpgnn::sampling {

class GlobalIds {
 public:
  // counts[p] = number of subgraphs of part p (>= 0). Throws UsageError on a negative
  // count or an empty list.
  explicit GlobalIds(const std::vector<std::int64_t>& counts);

  std::int64_t total() const { return offsets_.back(); }  // M
  std::int64_t num_parts() const { return static_cast<std::int64_t>(offsets_.size()) - 1; }
  std::int64_t offset(std::int64_t part) const;  // first global id of `part`
  std::int64_t count(std::int64_t part) const;
  const std::vector<std::int64_t>& offsets() const { return offsets_; }  // [P+1]
  // The part that owns global id `gid` in [0, M) (O(log P)); UsageError outside.
  std::int64_t owner(std::int64_t gid) const;
  // gid's index among its owner's subgraphs.
  std::int64_t local_index(std::int64_t gid) const;
  std::int64_t global_id(std::int64_t part, std::int64_t local_index) const;

 private:
  std::vector<std::int64_t> offsets_;  // [P+1], prefix sums of the counts
};

}  // namespace dpgnn::sampling
