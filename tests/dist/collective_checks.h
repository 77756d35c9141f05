// Collective checks shared by the in-process (LocalGroup), MPI and NCCL tests.
//
// Each check is called on every rank with that rank's communicator and asserts, on that
// rank, what the collective must have delivered there. Expected values come from closed
// forms, not from another communicator: rank r contributes (r+1)*base(i), so an all-reduce
// must give n(n+1)/2 * base(i); all-gather/all-to-all payloads encode (source rank,
// destination rank, index) so a misplaced block is caught. Counts are multiplied by
// `scale` so the MPI tests can push every count past a lowered per-call limit.
//
// `Buffer` abstracts where the communicator wants its buffers (host vector or CUDA memory):
// checks fill host vectors, move them to the communicator's side, run, and move back.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dpgnn/dist/communicator.h"
#include "dpgnn/dist/device.h"

namespace dpgnn::dist::testing {

// Memory on the communicator's side: plain host bytes, or a CudaBuffer for NCCL.
class SideBuffer {
 public:
  SideBuffer(BufferLocation where, std::size_t bytes) : where_(where), host_(bytes) {
    if (where_ == BufferLocation::cuda) device_ = CudaBuffer(bytes > 0 ? bytes : 1);
  }
  void* data() { return where_ == BufferLocation::host ? host_.data() : device_.data(); }
  template <class T>
  void put(const std::vector<T>& v) {
    if (where_ == BufferLocation::host)
      std::memcpy(host_.data(), v.data(), v.size() * sizeof(T));
    else
      device_.copy_from_host(v.data(), v.size() * sizeof(T));
  }
  template <class T>
  std::vector<T> get(std::size_t count) {
    std::vector<T> v(count);
    if (where_ == BufferLocation::host)
      std::memcpy(v.data(), host_.data(), count * sizeof(T));
    else
      device_.copy_to_host(v.data(), count * sizeof(T));
    return v;
  }

 private:
  BufferLocation where_;
  std::vector<unsigned char> host_;
  CudaBuffer device_;
};

// base(i) per element type: values whose sums over up to 4 ranks are exact.
inline float base_value(float*, std::size_t i) { return static_cast<float>(i % 13 + 1); }
inline double base_value(double*, std::size_t i) { return 0.5 * static_cast<double>(i + 1); }
inline std::int32_t base_value(std::int32_t*, std::size_t i) { return static_cast<std::int32_t>(i) - 3; }
inline std::int64_t base_value(std::int64_t*, std::size_t i) {
  return (std::int64_t{1} << 40) + static_cast<std::int64_t>(i);  // needs all 64 bits
}
inline std::uint8_t base_value(std::uint8_t*, std::size_t i) { return static_cast<std::uint8_t>(i % 5); }

template <class T>
void check_allreduce_sum(Communicator& comm, std::size_t count) {
  const int n = comm.size();
  std::vector<T> host(count);
  for (std::size_t i = 0; i < count; ++i)
    host[i] = static_cast<T>((comm.rank() + 1) * base_value(static_cast<T*>(nullptr), i));
  SideBuffer buf(comm.location(), count * sizeof(T));
  buf.put(host);
  comm.allreduce_sum(static_cast<T*>(buf.data()), count);
  const std::vector<T> got = buf.get<T>(count);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const T expected = static_cast<T>(n * (n + 1) / 2 * base_value(static_cast<T*>(nullptr), i));
    if (got[i] != expected) {
      if (wrong < 3)
        ADD_FAILURE() << "rank " << comm.rank() << " dtype " << dtype_name(dtype_of<T>)
                      << " element " << i << ": got " << +got[i] << ", expected " << +expected;
      ++wrong;
    }
  }
  EXPECT_EQ(wrong, 0u) << "rank " << comm.rank() << " dtype " << dtype_name(dtype_of<T>);
}

inline void check_allreduce_every_dtype(Communicator& comm, std::size_t scale) {
  check_allreduce_sum<float>(comm, 37 * scale);
  check_allreduce_sum<double>(comm, 29 * scale);
  check_allreduce_sum<std::int32_t>(comm, 31 * scale);
  check_allreduce_sum<std::int64_t>(comm, 23 * scale);
  check_allreduce_sum<std::uint8_t>(comm, 41 * scale);
}

inline void check_broadcast_from_every_root(Communicator& comm, std::size_t scale) {
  const std::size_t count = 19 * scale;
  for (int root = 0; root < comm.size(); ++root) {
    std::vector<std::int64_t> host(count, -1);
    if (comm.rank() == root)
      for (std::size_t i = 0; i < count; ++i) host[i] = 1000 * root + static_cast<std::int64_t>(i);
    SideBuffer buf(comm.location(), count * sizeof(std::int64_t));
    buf.put(host);
    comm.broadcast(static_cast<std::int64_t*>(buf.data()), count, root);
    const auto got = buf.get<std::int64_t>(count);
    for (std::size_t i = 0; i < count; ++i)
      if (got[i] != 1000 * root + static_cast<std::int64_t>(i)) {
        ADD_FAILURE() << "rank " << comm.rank() << ": broadcast from root " << root << " element "
                      << i << " is " << got[i];
        break;
      }
  }
}

// Payload of element i that rank `from` sends to rank `to`.
inline std::int64_t payload(int from, int to, std::size_t i) {
  return 1000000LL * from + 1000LL * to + static_cast<std::int64_t>(i);
}

inline void check_allgather_in_rank_order(Communicator& comm, std::size_t scale) {
  const std::size_t per_rank = 11 * scale;
  const int n = comm.size();
  std::vector<std::int64_t> mine(per_rank);
  for (std::size_t i = 0; i < per_rank; ++i) mine[i] = payload(comm.rank(), 0, i);
  SideBuffer send(comm.location(), per_rank * sizeof(std::int64_t));
  SideBuffer recv(comm.location(), per_rank * n * sizeof(std::int64_t));
  send.put(mine);
  comm.allgather(static_cast<const std::int64_t*>(send.data()), static_cast<std::int64_t*>(recv.data()),
                 per_rank);
  const auto got = recv.get<std::int64_t>(per_rank * n);
  for (int p = 0; p < n; ++p)
    for (std::size_t i = 0; i < per_rank; ++i)
      ASSERT_EQ(got[p * per_rank + i], payload(p, 0, i))
          << "rank " << comm.rank() << ": block of rank " << p << " element " << i;
}

// counts[p] elements from rank p; any pattern, zeros allowed.
inline void check_allgatherv_counts(Communicator& comm, const std::vector<std::size_t>& counts) {
  const int n = comm.size();
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  const std::size_t mine_count = counts[static_cast<std::size_t>(comm.rank())];
  std::vector<std::int64_t> mine(mine_count);
  for (std::size_t i = 0; i < mine_count; ++i) mine[i] = payload(comm.rank(), 0, i);
  SideBuffer send(comm.location(), mine_count * sizeof(std::int64_t));
  SideBuffer recv(comm.location(), total * sizeof(std::int64_t));
  send.put(mine);
  comm.allgatherv(static_cast<const std::int64_t*>(send.data()), mine_count,
                  static_cast<std::int64_t*>(recv.data()), counts);
  const auto got = recv.get<std::int64_t>(total);
  std::size_t offset = 0;
  for (int p = 0; p < n; ++p) {
    for (std::size_t i = 0; i < counts[static_cast<std::size_t>(p)]; ++i)
      ASSERT_EQ(got[offset + i], payload(p, 0, i))
          << "rank " << comm.rank() << ": block of rank " << p << " element " << i;
    offset += counts[static_cast<std::size_t>(p)];
  }
}

inline void check_allgatherv_uneven_and_zero(Communicator& comm, std::size_t scale) {
  const int n = comm.size();
  std::vector<std::size_t> uneven(n), only_last(n, 0), none(n, 0);
  for (int p = 0; p < n; ++p) uneven[p] = (3 * static_cast<std::size_t>(p)) % 5 * scale;  // 0,3,1,4
  only_last[n - 1] = 7 * scale;  // every other rank contributes nothing but still calls
  check_allgatherv_counts(comm, uneven);
  check_allgatherv_counts(comm, only_last);
  check_allgatherv_counts(comm, none);
}

// count(from -> to) is any function agreed by all ranks.
inline void check_alltoallv_counts(Communicator& comm,
                                   const std::function<std::size_t(int, int)>& count) {
  const int n = comm.size();
  const int me = comm.rank();
  std::vector<std::size_t> send_counts(n), recv_counts(n);
  std::vector<std::int64_t> outgoing;
  for (int q = 0; q < n; ++q) {
    send_counts[q] = count(me, q);
    recv_counts[q] = count(q, me);
    for (std::size_t i = 0; i < send_counts[q]; ++i) outgoing.push_back(payload(me, q, i));
  }
  std::size_t recv_total = 0;
  for (std::size_t c : recv_counts) recv_total += c;
  SideBuffer send(comm.location(), outgoing.size() * sizeof(std::int64_t));
  SideBuffer recv(comm.location(), recv_total * sizeof(std::int64_t));
  send.put(outgoing);
  comm.alltoallv(static_cast<const std::int64_t*>(send.data()), send_counts,
                 static_cast<std::int64_t*>(recv.data()), recv_counts);
  const auto got = recv.get<std::int64_t>(recv_total);
  std::size_t offset = 0;
  for (int p = 0; p < n; ++p) {
    for (std::size_t i = 0; i < recv_counts[p]; ++i)
      ASSERT_EQ(got[offset + i], payload(p, me, i))
          << "rank " << me << ": element " << i << " from rank " << p;
    offset += recv_counts[p];
  }
}

inline void check_alltoallv_uneven_and_zero(Communicator& comm, std::size_t scale) {
  // (from + 2*to) % 4: zero for 0->0, 2->1, 0->2, ... and up to 3*scale elsewhere.
  check_alltoallv_counts(comm, [scale](int from, int to) {
    return static_cast<std::size_t>((from + 2 * to) % 4) * scale;
  });
  // Rank 0 sends and receives nothing at all but still takes part.
  check_alltoallv_counts(comm, [scale](int from, int to) {
    return from == 0 || to == 0 ? std::size_t{0} : static_cast<std::size_t>(from + to) * scale;
  });
}

// Every rank sends two messages of different lengths to every other rank, in rank order, and
// receives them in the same order (sends are buffered or matched by the peer's receive: rank
// p sends to q before receiving from q when p < q, so no pair waits on each other).
inline void check_send_recv_between_every_pair(Communicator& comm, std::size_t scale) {
  const int me = comm.rank(), n = comm.size();
  auto length = [scale](int from, int to, int k) { return static_cast<std::size_t>(from + 2 * to + k + 1) * scale; };
  auto exchange_with = [&](int peer, bool send_first) {
    for (int step = 0; step < 2; ++step) {
      const bool sending = (step == 0) == send_first;
      for (int k = 0; k < 2; ++k) {
        if (sending) {
          const std::size_t len = length(me, peer, k);
          std::vector<std::int64_t> out(len);
          for (std::size_t i = 0; i < len; ++i) out[i] = payload(me, peer, i + static_cast<std::size_t>(k));
          SideBuffer buf(comm.location(), len * sizeof(std::int64_t));
          buf.put(out);
          comm.send(static_cast<const std::int64_t*>(buf.data()), len, peer);
        } else {
          const std::size_t len = length(peer, me, k);
          SideBuffer buf(comm.location(), len * sizeof(std::int64_t));
          comm.recv(static_cast<std::int64_t*>(buf.data()), len, peer);
          const auto got = buf.get<std::int64_t>(len);
          for (std::size_t i = 0; i < len; ++i)
            ASSERT_EQ(got[i], payload(peer, me, i + static_cast<std::size_t>(k)))
                << "rank " << me << ": message " << k << " from rank " << peer << " element " << i;
        }
      }
    }
  };
  for (int peer = 0; peer < n; ++peer)
    if (peer != me) exchange_with(peer, me < peer);
}

inline void check_every_collective(Communicator& comm, std::size_t scale) {
  check_allreduce_every_dtype(comm, scale);
  check_broadcast_from_every_root(comm, scale);
  check_allgather_in_rank_order(comm, scale);
  check_allgatherv_uneven_and_zero(comm, scale);
  check_alltoallv_uneven_and_zero(comm, scale);
  check_send_recv_between_every_pair(comm, scale);
  comm.barrier();
}

}  // namespace dpgnn::dist::testing
