// Small collective helpers for text the trainer shares (the ranks need no shared file system).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dpgnn/dist/communicator.h"

namespace dpgnn::train {

// Broadcasts rank `root`'s text to every rank.
inline void broadcast_text(std::string& text, dist::Communicator& comm, int root = 0) {
  std::int64_t n = static_cast<std::int64_t>(text.size());
  comm.broadcast(&n, 1, root);
  std::vector<std::uint8_t> buf(text.begin(), text.end());
  buf.resize(static_cast<std::size_t>(n) + 1);  // never a null buffer
  comm.broadcast(buf.data(), buf.size(), root);
  text.assign(buf.begin(), buf.begin() + n);
}

// Every rank's host name, by rank.
inline std::vector<std::string> gather_hostnames(dist::Communicator& comm) {
  constexpr std::size_t kLen = 256;
  std::vector<std::uint8_t> mine(kLen, 0), all(kLen * static_cast<std::size_t>(comm.size()), 0);
  ::gethostname(reinterpret_cast<char*>(mine.data()), kLen - 1);
  comm.allgather(mine.data(), all.data(), kLen);
  std::vector<std::string> hosts;
  for (int r = 0; r < comm.size(); ++r) hosts.emplace_back(reinterpret_cast<const char*>(all.data() + r * kLen));
  return hosts;
}

}  // namespace dpgnn::train
