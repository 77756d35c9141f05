// Streaming content checksum (XXH3-128) used to tie partitions, checkpoints and runs to
// the exact dataset they were made from. Not a cryptographic hash: it guards against
// mistakes (a stale partition, a re-imported dataset), not against an adversary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dpgnn {

class Checksum {
 public:
  Checksum();
  ~Checksum();
  Checksum(const Checksum&) = delete;
  Checksum& operator=(const Checksum&) = delete;

  void update(const void* data, std::size_t bytes);
  template <typename T>
  void update(const std::vector<T>& v) {
    update(v.data(), v.size() * sizeof(T));
  }
  // Hashes a label first so that equal bytes in different fields give different sums.
  void update_tag(const std::string& tag);
  // 32 lowercase hex digits.
  std::string hex() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dpgnn
