// Argument checks shared by every backend, and element types.
//
// The public collective methods check what one rank can check on its own (null buffers,
// the root's range, one count per rank, the rank's own entry of allgatherv's counts) and
// then call the backend. Cross-rank agreement cannot be checked without communicating;
// LocalGroup checks it in tests, MPI and NCCL trust the caller as their own APIs do.
#include "dpgnn/dist/communicator.h"

#include <string>

#include "dpgnn/dist/nccl_communicator.h"
#include "dpgnn/util/error.h"

namespace dpgnn::dist {

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::u8: return 1;
  }
  throw UsageError("dist: unknown dtype value " + std::to_string(static_cast<int>(dtype)));
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
  }
  return "unknown";
}

const char* location_name(BufferLocation location) {
  return location == BufferLocation::host ? "host" : "cuda";
}

namespace {

void require_buffer(const void* buf, std::size_t count, const char* op, const char* name) {
  if (buf == nullptr && count > 0)
    throw UsageError(std::string("dist: ") + op + ": '" + name + "' is null but " +
                     std::to_string(count) + " elements were requested");
}

std::size_t checked_total(const std::vector<std::size_t>& counts, int size, const char* op,
                          const char* name) {
  if (counts.size() != static_cast<std::size_t>(size))
    throw UsageError(std::string("dist: ") + op + ": '" + name + "' has " +
                     std::to_string(counts.size()) + " entries, expected one per rank (" +
                     std::to_string(size) + ")");
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  return total;
}

}  // namespace

void Communicator::allreduce_sum(void* buf, std::size_t count, DType dtype) {
  require_buffer(buf, count, "allreduce_sum", "buf");
  if (count == 0) return;  // every rank passes the same count, so every rank returns here
  do_allreduce_sum(buf, count, dtype);
}

void Communicator::broadcast(void* buf, std::size_t count, DType dtype, int root) {
  if (root < 0 || root >= size())
    throw UsageError("dist: broadcast: root " + std::to_string(root) + " is not a rank of a " +
                     std::to_string(size()) + "-rank communicator");
  require_buffer(buf, count, "broadcast", "buf");
  if (count == 0) return;
  do_broadcast(buf, count, dtype, root);
}

void Communicator::allgather(const void* send, void* recv, std::size_t count_per_rank,
                             DType dtype) {
  require_buffer(send, count_per_rank, "allgather", "send");
  require_buffer(recv, count_per_rank, "allgather", "recv");
  if (count_per_rank == 0) return;
  do_allgather(send, recv, count_per_rank, dtype);
}

void Communicator::allgatherv(const void* send, std::size_t send_count, void* recv,
                              const std::vector<std::size_t>& recv_counts, DType dtype) {
  const std::size_t total = checked_total(recv_counts, size(), "allgatherv", "recv_counts");
  if (recv_counts[static_cast<std::size_t>(rank())] != send_count)
    throw UsageError("dist: allgatherv: rank " + std::to_string(rank()) + " sends " +
                     std::to_string(send_count) + " elements but recv_counts[" +
                     std::to_string(rank()) + "] is " +
                     std::to_string(recv_counts[static_cast<std::size_t>(rank())]));
  require_buffer(send, send_count, "allgatherv", "send");
  require_buffer(recv, total, "allgatherv", "recv");
  do_allgatherv(send, send_count, recv, recv_counts, dtype);
}

void Communicator::alltoallv(const void* send, const std::vector<std::size_t>& send_counts,
                             void* recv, const std::vector<std::size_t>& recv_counts,
                             DType dtype) {
  const std::size_t send_total = checked_total(send_counts, size(), "alltoallv", "send_counts");
  const std::size_t recv_total = checked_total(recv_counts, size(), "alltoallv", "recv_counts");
  const auto me = static_cast<std::size_t>(rank());
  if (send_counts[me] != recv_counts[me])
    throw UsageError("dist: alltoallv: rank " + std::to_string(rank()) + " sends " +
                     std::to_string(send_counts[me]) + " elements to itself (send_counts[" +
                     std::to_string(rank()) + "]) but expects " + std::to_string(recv_counts[me]) +
                     " (recv_counts[" + std::to_string(rank()) + "])");
  require_buffer(send, send_total, "alltoallv", "send");
  require_buffer(recv, recv_total, "alltoallv", "recv");
  do_alltoallv(send, send_counts, recv, recv_counts, dtype);
}

namespace {
void require_peer(int peer, int size, const char* op, const char* name) {
  if (peer < 0 || peer >= size)
    throw UsageError(std::string("dist: ") + op + ": " + name + " " + std::to_string(peer) + " is not a rank of a " +
                     std::to_string(size) + "-rank communicator");
}
}  // namespace

void Communicator::send(const void* buf, std::size_t count, DType dtype, int dest) {
  require_peer(dest, size(), "send", "dest");
  require_buffer(buf, count, "send", "buf");
  if (count == 0) return;  // the receiver passes the same count and returns too
  do_send(buf, count, dtype, dest);
}

void Communicator::recv(void* buf, std::size_t count, DType dtype, int source) {
  require_peer(source, size(), "recv", "source");
  require_buffer(buf, count, "recv", "buf");
  if (count == 0) return;
  do_recv(buf, count, dtype, source);
}

void Communicator::barrier() { do_barrier(); }

#ifndef DPGNN_WITH_NCCL
// Without NCCL (a CPU build) the NCCL backend is declared but refuses with the CMake fix.
std::unique_ptr<Communicator> make_nccl_communicator(Communicator&, int) {
  throw UsageError(
      "dist: the NCCL communicator is not in this build: reconfigure with -DDPGNN_WITH_CUDA=ON "
      "-DDPGNN_WITH_NCCL=ON");
}
#endif

}  // namespace dpgnn::dist
