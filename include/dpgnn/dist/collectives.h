// The one place that chooses how a rank talks to the others (DESIGN.md decision 12).
//
// A command (train, audit, predict, partition) opens one Collectives per process; everything
// below takes it by reference and passes buffers, never a backend. It owns the rank's host
// communicator (MPI) and, on a GPU, binds the rank's GPU (local rank -> device, device.h) and
// opens NCCL on it, unless DPGNN_GPU_COLLECTIVES=mpi (read here only) asks to stage device
// buffers through host memory over MPI (several ranks on one GPU, which NCCL refuses).
// Where a buffer lives decides the path, as XGBoost's CommGroup does: host buffers go over
// the host communicator; device buffers over the device communicator, or, without one,
// copied to host memory, moved over the host communicator and copied back.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "dpgnn/dist/communicator.h"

namespace dpgnn::dist {

// How a GPU run's device buffers travel: DPGNN_GPU_COLLECTIVES unset, empty or "nccl" ->
// nccl; "mpi" -> staged through host memory. Throws UsageError for any other value.
enum class GpuCollectives { nccl, mpi };
GpuCollectives gpu_collectives_from_environment();

class Collectives {
 public:
  // Collective (needs init_environment()): the host communicator; with `on_gpu` also binds
  // GPU `cuda_device` (or, when it is -1, the local rank's) and opens NCCL on it unless
  // DPGNN_GPU_COLLECTIVES=mpi. Throws UsageError when the build or the machine cannot serve a
  // GPU run (saying which CMake option to set, or why no GPU is usable).
  static Collectives open(bool on_gpu, int cuda_device = -1);
  // Over communicators owned elsewhere (in-process LocalGroup tests): they must outlive it.
  static Collectives over(Communicator& host, Communicator* device = nullptr);

  int rank() const { return host_->rank(); }
  int size() const { return host_->size(); }
  // The GPU bound by open(on_gpu = true), or -1.
  int cuda_device() const { return cuda_device_; }
  // The backend that moves device buffers ("nccl", or the host's when they are staged), for logs.
  const char* device_backend() const { return device_ != nullptr ? device_->backend() : host_->backend(); }
  // The host communicator, for code that moves only host buffers.
  Communicator& host() const { return *host_; }
  // The device communicator (NCCL), or nullptr where device buffers are staged: for the tests
  // and benchmarks of one backend; everything else passes buffers to the calls below.
  Communicator* device() const { return device_; }
  // The backend's own communicator for libraries that take one (PT-Scotch): a pointer to the
  // host communicator's MPI_Comm, or nullptr when it is not an MPI communicator.
  const void* native_mpi_comm() const { return host_->native_handle(); }

  // The collectives of communicator.h, on host or device buffers (all of one call in the same
  // place); the path follows from where the buffers live.
  void allreduce_sum(void* buf, std::size_t count, DType dtype) const;
  void broadcast(void* buf, std::size_t count, DType dtype, int root) const;
  void allgather(const void* send, void* recv, std::size_t count_per_rank, DType dtype) const;
  void allgatherv(const void* send, std::size_t send_count, void* recv, const std::vector<std::size_t>& recv_counts,
                  DType dtype) const;
  void alltoallv(const void* send, const std::vector<std::size_t>& send_counts, void* recv,
                 const std::vector<std::size_t>& recv_counts, DType dtype) const;
  void send(const void* buf, std::size_t count, DType dtype, int dest) const;
  void recv(void* buf, std::size_t count, DType dtype, int source) const;
  void barrier() const { host_->barrier(); }

  template <class T>
  void allreduce_sum(T* buf, std::size_t count) const {
    allreduce_sum(static_cast<void*>(buf), count, dtype_of<T>);
  }
  template <class T>
  void broadcast(T* buf, std::size_t count, int root) const {
    broadcast(static_cast<void*>(buf), count, dtype_of<T>, root);
  }
  template <class T>
  void allgather(const T* send, T* recv, std::size_t count_per_rank) const {
    allgather(static_cast<const void*>(send), static_cast<void*>(recv), count_per_rank, dtype_of<T>);
  }
  template <class T>
  void allgatherv(const T* send, std::size_t send_count, T* recv, const std::vector<std::size_t>& recv_counts) const {
    allgatherv(static_cast<const void*>(send), send_count, static_cast<void*>(recv), recv_counts, dtype_of<T>);
  }
  template <class T>
  void alltoallv(const T* send, const std::vector<std::size_t>& send_counts, T* recv,
                 const std::vector<std::size_t>& recv_counts) const {
    alltoallv(static_cast<const void*>(send), send_counts, static_cast<void*>(recv), recv_counts, dtype_of<T>);
  }
  template <class T>
  void send(const T* buf, std::size_t count, int dest) const {
    send(static_cast<const void*>(buf), count, dtype_of<T>, dest);
  }
  template <class T>
  void recv(T* buf, std::size_t count, int source) const {
    recv(static_cast<void*>(buf), count, dtype_of<T>, source);
  }

 private:
  Collectives() = default;
  // The communicator for buffers at `location`, or nullptr when device buffers are staged.
  Communicator* for_location(BufferLocation location) const {
    return location == BufferLocation::host ? host_ : device_;
  }
  std::unique_ptr<Communicator> owned_host_, owned_device_;
  Communicator* host_ = nullptr;
  Communicator* device_ = nullptr;
  int cuda_device_ = -1;
};

}  // namespace dpgnn::dist
