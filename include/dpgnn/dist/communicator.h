// The communicator interface: collectives over flat buffers, chosen by where the buffers live.
//
// A small interface in the style of XGBoost's `Comm`/`Coll` and Horovod's ops: one
// abstract class with the few collectives the trainer needs (one all-reduce of one
// contiguous gradient buffer per step, broadcasts of start-up state, all-gathers of
// statistics, all-to-all-v of halo rows during evaluation, point-to-point pieces of a partition file), implemented by
//   - MpiCommunicator   (mpi_communicator.h):  host buffers, over a duplicate of MPI_COMM_WORLD;
//   - NcclCommunicator  (nccl_communicator.h): CUDA buffers, bootstrapped over MPI;
//   - LocalGroup        (local_group.h):       n ranks as n threads of one process, for tests.
// A command does not pick one: it opens a Collectives (collectives.h), which does.
// Backend headers (mpi.h, nccl.h, cuda_runtime.h) never appear here: they stay in src/dist/.
//
// Semantics shared by every implementation (and checked by the same tests):
//   - every call is collective: every rank calls it, in the same order, with the same
//     dtype, and with counts that agree (a rank with nothing to contribute still calls it
//     with count 0 where the collective allows it: allgatherv, alltoallv);
//   - calls are synchronous: when one returns, the output is complete and the input may be
//     reused (the NCCL backend synchronises its stream before returning);
//   - counts are in elements, not bytes; counts above INT_MAX work (MPI calls are chunked);
//   - send and receive buffers must not overlap;
//   - all ranks receive the same all-reduce result, but the summation order (and so the
//     last bits of a floating-point sum) may differ between backends and rank counts.
// Errors of the underlying library throw dpgnn::IoError naming the call and the library's
// message; inconsistent arguments throw dpgnn::UsageError naming the parameter.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "dpgnn/dist/dtype.h"

namespace dpgnn::dist {

// Where a communicator's buffers must live.
enum class BufferLocation { host, cuda };
const char* location_name(BufferLocation location);

class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual BufferLocation location() const = 0;
  // "mpi", "nccl" or "local": for logs.
  virtual const char* backend() const = 0;

  // buf[0..count) := sum over ranks of buf[0..count), in place, on every rank.
  void allreduce_sum(void* buf, std::size_t count, DType dtype);
  // buf[0..count) := root's buf[0..count), on every rank.
  void broadcast(void* buf, std::size_t count, DType dtype, int root);
  // recv[p*count_per_rank .. (p+1)*count_per_rank) := rank p's send[0..count_per_rank).
  // recv holds size() * count_per_rank elements.
  void allgather(const void* send, void* recv, std::size_t count_per_rank, DType dtype);
  // Like allgather with a count per rank: recv_counts[p] elements from rank p, stored one
  // after another (displacements are the prefix sums of recv_counts). recv_counts has one
  // entry per rank, identical on every rank, and send_count == recv_counts[rank()].
  void allgatherv(const void* send, std::size_t send_count, void* recv,
                  const std::vector<std::size_t>& recv_counts, DType dtype);
  // Personalised exchange: send holds send_counts[0] elements for rank 0, then
  // send_counts[1] for rank 1, ...; recv receives recv_counts[p] elements from rank p, in
  // rank order. recv_counts[p] on this rank must equal send_counts[rank()] on rank p.
  void alltoallv(const void* send, const std::vector<std::size_t>& send_counts, void* recv,
                 const std::vector<std::size_t>& recv_counts, DType dtype);
  // Point to point: rank `dest` must call recv with this rank as `source` and the same count
  // and dtype. Messages between one pair of ranks arrive in the order they were sent.
  // send may return before the message is received (it may be buffered).
  void send(const void* buf, std::size_t count, DType dtype, int dest);
  void recv(void* buf, std::size_t count, DType dtype, int source);
  void barrier();

  // The backend's own communicator for libraries that take one: a pointer to an MPI_Comm for
  // the MPI backend (PT-Scotch), nullptr for the others.
  virtual const void* native_handle() const { return nullptr; }

  // Typed conveniences: the dtype follows from the element type.
  template <class T>
  void allreduce_sum(T* buf, std::size_t count) {
    allreduce_sum(static_cast<void*>(buf), count, dtype_of<T>);
  }
  template <class T>
  void broadcast(T* buf, std::size_t count, int root) {
    broadcast(static_cast<void*>(buf), count, dtype_of<T>, root);
  }
  template <class T>
  void allgather(const T* send, T* recv, std::size_t count_per_rank) {
    allgather(static_cast<const void*>(send), static_cast<void*>(recv), count_per_rank,
              dtype_of<T>);
  }
  template <class T>
  void allgatherv(const T* send, std::size_t send_count, T* recv,
                  const std::vector<std::size_t>& recv_counts) {
    allgatherv(static_cast<const void*>(send), send_count, static_cast<void*>(recv), recv_counts,
               dtype_of<T>);
  }
  template <class T>
  void alltoallv(const T* send, const std::vector<std::size_t>& send_counts, T* recv,
                 const std::vector<std::size_t>& recv_counts) {
    alltoallv(static_cast<const void*>(send), send_counts, static_cast<void*>(recv), recv_counts,
              dtype_of<T>);
  }
  template <class T>
  void send(const T* buf, std::size_t count, int dest) {
    send(static_cast<const void*>(buf), count, dtype_of<T>, dest);
  }
  template <class T>
  void recv(T* buf, std::size_t count, int source) {
    recv(static_cast<void*>(buf), count, dtype_of<T>, source);
  }

 protected:
  Communicator() = default;
  // The backends implement these; the public wrappers above have already checked the
  // arguments that can be checked locally (null buffers, root range, count vector sizes).
  virtual void do_allreduce_sum(void* buf, std::size_t count, DType dtype) = 0;
  virtual void do_broadcast(void* buf, std::size_t count, DType dtype, int root) = 0;
  virtual void do_allgather(const void* send, void* recv, std::size_t count_per_rank,
                            DType dtype) = 0;
  virtual void do_allgatherv(const void* send, std::size_t send_count, void* recv,
                             const std::vector<std::size_t>& recv_counts, DType dtype) = 0;
  virtual void do_alltoallv(const void* send, const std::vector<std::size_t>& send_counts,
                            void* recv, const std::vector<std::size_t>& recv_counts,
                            DType dtype) = 0;
  virtual void do_send(const void* buf, std::size_t count, DType dtype, int dest) = 0;
  virtual void do_recv(void* buf, std::size_t count, DType dtype, int source) = 0;
  virtual void do_barrier() = 0;
};

}  // namespace dpgnn::dist
