// NCCL implementation of Communicator for CUDA buffers (see nccl_communicator.h).
//
// Compiled only with DPGNN_WITH_NCCL. The bootstrap follows nccl-tests and llm.c: rank 0
// calls ncclGetUniqueId and the 128 opaque bytes are broadcast over a host communicator
// (MPI) before ncclCommInitRank. Every collective first waits for the device's pending work
// (its inputs may come from any stream), runs on this communicator's own stream and returns
// only when the stream is idle, so callers get MPI-like synchronous semantics.
// The wait polls cudaStreamQuery and ncclCommGetAsyncError (nccl-tests'
// testStreamSynchronize): a peer that died or a network error aborts the communicator
// and throws instead of blocking in cudaStreamSynchronize forever.
// allgatherv and alltoallv are grouped ncclSend/ncclRecv (NCCL's documented pattern for
// v-collectives); this rank's own block is a device-to-device copy on the same stream.
#include "dpgnn/dist/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <spdlog/spdlog.h>

#include <string>
#include <thread>
#include <vector>

#include "cuda_check.h"
#include "dpgnn/util/error.h"
#include "nccl_check.h"

namespace dpgnn::dist {
namespace {

ncclDataType_t to_nccl(DType dtype) {
  switch (dtype) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::i32: return ncclInt32;
    case DType::i64: return ncclInt64;
    case DType::u8: return ncclUint8;
  }
  throw UsageError("dist: NCCL: unknown dtype");
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Communicator& bootstrap, int device)
      : rank_(bootstrap.rank()), size_(bootstrap.size()), device_(device) {
    ncclUniqueId id{};
    if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    bootstrap.broadcast(reinterpret_cast<std::uint8_t*>(&id), sizeof(id), 0);
    CUDA_CHECK(cudaSetDevice(device_));
    NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));
    try {
      CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    } catch (...) {
      ncclCommDestroy(comm_);
      throw;
    }
  }

  ~NcclCommunicator() override {
    // Destructors never throw: failures are logged. After an error the communicator is
    // aborted (ncclCommAbort), which does not wait for peers that may be gone.
    if (comm_ != nullptr) {
      const ncclResult_t rc = failed_ ? ncclCommAbort(comm_) : ncclCommDestroy(comm_);
      if (rc != ncclSuccess) spdlog::warn("NCCL communicator teardown: {}", ncclGetErrorString(rc));
    }
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
    if (barrier_buf_ != nullptr) (void)cudaFree(barrier_buf_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  BufferLocation location() const override { return BufferLocation::cuda; }
  const char* backend() const override { return "nccl"; }

 protected:
  void do_allreduce_sum(void* buf, std::size_t count, DType dtype) override {
    enqueue_and_wait([&] {
      NCCL_CHECK(ncclAllReduce(buf, buf, count, to_nccl(dtype), ncclSum, comm_, stream_));
    });
  }

  void do_broadcast(void* buf, std::size_t count, DType dtype, int root) override {
    enqueue_and_wait([&] {
      NCCL_CHECK(ncclBroadcast(buf, buf, count, to_nccl(dtype), root, comm_, stream_));
    });
  }

  void do_allgather(const void* send, void* recv, std::size_t count_per_rank,
                    DType dtype) override {
    enqueue_and_wait([&] {
      NCCL_CHECK(ncclAllGather(send, recv, count_per_rank, to_nccl(dtype), comm_, stream_));
    });
  }

  void do_allgatherv(const void* send, std::size_t send_count, void* recv,
                     const std::vector<std::size_t>& recv_counts, DType dtype) override {
    const std::size_t elem = dtype_size(dtype);
    enqueue_and_wait([&] {
      std::size_t offset = 0;
      NCCL_CHECK(ncclGroupStart());
      for (int p = 0; p < size_; ++p) {
        const std::size_t n = recv_counts[static_cast<std::size_t>(p)];
        char* dst = static_cast<char*>(recv) + offset * elem;
        if (p == rank_) {
          if (n > 0) CUDA_CHECK(cudaMemcpyAsync(dst, send, n * elem, cudaMemcpyDeviceToDevice, stream_));
        } else {
          if (send_count > 0) NCCL_CHECK(ncclSend(send, send_count, to_nccl(dtype), p, comm_, stream_));
          if (n > 0) NCCL_CHECK(ncclRecv(dst, n, to_nccl(dtype), p, comm_, stream_));
        }
        offset += n;
      }
      NCCL_CHECK(ncclGroupEnd());
    });
  }

  void do_alltoallv(const void* send, const std::vector<std::size_t>& send_counts, void* recv,
                    const std::vector<std::size_t>& recv_counts, DType dtype) override {
    const std::size_t elem = dtype_size(dtype);
    enqueue_and_wait([&] {
      std::size_t send_offset = 0;
      std::size_t recv_offset = 0;
      NCCL_CHECK(ncclGroupStart());
      for (int p = 0; p < size_; ++p) {
        const std::size_t ns = send_counts[static_cast<std::size_t>(p)];
        const std::size_t nr = recv_counts[static_cast<std::size_t>(p)];
        const char* src = static_cast<const char*>(send) + send_offset * elem;
        char* dst = static_cast<char*>(recv) + recv_offset * elem;
        if (p == rank_) {
          if (nr > 0) CUDA_CHECK(cudaMemcpyAsync(dst, src, nr * elem, cudaMemcpyDeviceToDevice, stream_));
        } else {
          if (ns > 0) NCCL_CHECK(ncclSend(src, ns, to_nccl(dtype), p, comm_, stream_));
          if (nr > 0) NCCL_CHECK(ncclRecv(dst, nr, to_nccl(dtype), p, comm_, stream_));
        }
        send_offset += ns;
        recv_offset += nr;
      }
      NCCL_CHECK(ncclGroupEnd());
    });
  }

  void do_send(const void* buf, std::size_t count, DType dtype, int dest) override {
    enqueue_and_wait([&] { NCCL_CHECK(ncclSend(buf, count, to_nccl(dtype), dest, comm_, stream_)); });
  }

  void do_recv(void* buf, std::size_t count, DType dtype, int source) override {
    enqueue_and_wait([&] { NCCL_CHECK(ncclRecv(buf, count, to_nccl(dtype), source, comm_, stream_)); });
  }

  void do_barrier() override {
    // NCCL has no barrier: an all-reduce of one int on the device is the usual stand-in.
    if (barrier_buf_ == nullptr) {
      CUDA_CHECK(cudaSetDevice(device_));
      CUDA_CHECK(cudaMalloc(&barrier_buf_, sizeof(int)));
      CUDA_CHECK(cudaMemset(barrier_buf_, 0, sizeof(int)));
    }
    do_allreduce_sum(barrier_buf_, 1, DType::i32);
  }

 private:
  template <class Enqueue>
  void enqueue_and_wait(Enqueue enqueue) {
    if (failed_) throw IoError("NCCL communicator is unusable after an earlier error");
    try {
      CUDA_CHECK(cudaSetDevice(device_));
      // The buffers may have been written by kernels on other streams of this device
      // (LibTorch's); this communicator's stream is non-blocking and would not wait for them.
      CUDA_CHECK(cudaDeviceSynchronize());
      enqueue();
      wait();
    } catch (...) {
      failed_ = true;
      throw;
    }
  }

  void wait() {
    for (;;) {
      const cudaError_t state = cudaStreamQuery(stream_);
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady) CUDA_CHECK(state);
      ncclResult_t async_error = ncclSuccess;
      NCCL_CHECK(ncclCommGetAsyncError(comm_, &async_error));
      if (async_error != ncclSuccess) {
        const std::string detail = ncclGetLastError(comm_);
        throw IoError(std::string("NCCL collective failed asynchronously: ") +
                      ncclGetErrorString(async_error) +
                      (detail.empty() ? std::string() : " (last NCCL error: " + detail + ")"));
      }
      std::this_thread::yield();
    }
  }

  int rank_;
  int size_;
  int device_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* barrier_buf_ = nullptr;
  bool failed_ = false;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int cuda_device) {
  if (bootstrap.location() != BufferLocation::host)
    throw UsageError(std::string("dist: make_nccl_communicator: the bootstrap communicator must "
                                 "work on host buffers, got a '") +
                     bootstrap.backend() + "' communicator");
  return std::make_unique<NcclCommunicator>(bootstrap, cuda_device);
}

}  // namespace dpgnn::dist
