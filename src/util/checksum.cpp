// XXH3-128 streaming wrapper (libxxhash).
#include "dpgnn/util/checksum.h"

#include <xxhash.h>

#include <cstdio>

namespace dpgnn {

struct Checksum::State {
  XXH3_state_t* s = nullptr;
};

Checksum::Checksum() : state_(std::make_unique<State>()) {
  state_->s = XXH3_createState();
  XXH3_128bits_reset(state_->s);
}

Checksum::~Checksum() { XXH3_freeState(state_->s); }

void Checksum::update(const void* data, std::size_t bytes) {
  if (bytes > 0) XXH3_128bits_update(state_->s, data, bytes);
}

void Checksum::update_tag(const std::string& tag) {
  const std::uint64_t n = tag.size();
  update(&n, sizeof n);
  update(tag.data(), tag.size());
}

std::string Checksum::hex() const {
  const XXH128_hash_t h = XXH3_128bits_digest(state_->s);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

}  // namespace dpgnn
