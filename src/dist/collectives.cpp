// The one place that chooses a backend (see collectives.h).
#include "dpgnn/dist/collectives.h"

#include <cstdlib>
#include <string>

#include "dpgnn/dist/device.h"
#include "dpgnn/dist/environment.h"
#include "dpgnn/dist/mpi_communicator.h"
#include "dpgnn/dist/nccl_communicator.h"
#include "dpgnn/util/error.h"

namespace dpgnn::dist {

GpuCollectives gpu_collectives_from_environment() {
  const char* value = std::getenv("DPGNN_GPU_COLLECTIVES");
  const std::string via = value != nullptr ? value : "";
  if (via.empty() || via == "nccl") return GpuCollectives::nccl;
  if (via == "mpi") return GpuCollectives::mpi;
  throw UsageError("DPGNN_GPU_COLLECTIVES must be nccl or mpi, got '" + via + "'");
}

Collectives Collectives::open(bool on_gpu, int cuda_device) {
  const bool nccl = on_gpu && gpu_collectives_from_environment() == GpuCollectives::nccl;
  if (nccl && !built_with_nccl())
    throw UsageError(
        "dist: buffers on 'cuda' need the NCCL communicator, but this build has no NCCL: "
        "reconfigure with -DDPGNN_WITH_CUDA=ON -DDPGNN_WITH_NCCL=ON, or use device 'cpu'");
  Collectives c;
  c.owned_host_ = make_mpi_communicator();
  c.host_ = c.owned_host_.get();
  if (!on_gpu) return c;
  // DESIGN.md 9: a pinned device, else local rank -> GPU (device.h).
  c.cuda_device_ = cuda_device >= 0 ? bind_cuda_device_index(cuda_device) : bind_cuda_device(environment().local_rank);
  if (nccl) {
    c.owned_device_ = make_nccl_communicator(*c.host_, c.cuda_device_);
    c.device_ = c.owned_device_.get();
  }
  return c;
}

Collectives Collectives::over(Communicator& host, Communicator* device) {
  if (host.location() != BufferLocation::host)
    throw UsageError(std::string("dist: Collectives::over: the host communicator is a '") + host.backend() +
                     "' communicator");
  Collectives c;
  c.host_ = &host;
  c.device_ = device;
  return c;
}

namespace {

// Where the buffers of one call live (the first non-null one decides). A run without a GPU
// never asks CUDA.
BufferLocation location_of(bool gpu_run, const void* a, const void* b = nullptr) {
  if (!gpu_run) return BufferLocation::host;
  const void* p = a != nullptr ? a : b;
  return p != nullptr && is_cuda_pointer(p) ? BufferLocation::cuda : BufferLocation::host;
}

// A device buffer's bytes in host memory for the length of one staged call.
struct Staged {
  Staged(const void* device_buf, std::size_t count, DType dtype, bool fill)
      : device(device_buf), bytes(count * dtype_size(dtype)), host(bytes) {
    if (fill && bytes > 0) copy_to_host(host.data(), device, bytes);
  }
  void write_back(void* device_buf) const {
    if (bytes > 0) copy_to_device(device_buf, host.data(), bytes);
  }
  void* data() { return host.data(); }
  const void* device;
  std::size_t bytes;
  std::vector<unsigned char> host;
};

std::size_t total(const std::vector<std::size_t>& counts) {
  std::size_t s = 0;
  for (std::size_t c : counts) s += c;
  return s;
}

}  // namespace

void Collectives::allreduce_sum(void* buf, std::size_t count, DType dtype) const {
  if (Communicator* comm = for_location(location_of(cuda_device_ >= 0, buf))) return comm->allreduce_sum(buf, count, dtype);
  Staged s(buf, count, dtype, true);
  host_->allreduce_sum(s.data(), count, dtype);
  s.write_back(buf);
}

void Collectives::broadcast(void* buf, std::size_t count, DType dtype, int root) const {
  if (Communicator* comm = for_location(location_of(cuda_device_ >= 0, buf))) return comm->broadcast(buf, count, dtype, root);
  Staged s(buf, count, dtype, rank() == root);
  host_->broadcast(s.data(), count, dtype, root);
  s.write_back(buf);
}

void Collectives::allgather(const void* send, void* recv, std::size_t count_per_rank, DType dtype) const {
  if (Communicator* comm = for_location(location_of(cuda_device_ >= 0, send, recv)))
    return comm->allgather(send, recv, count_per_rank, dtype);
  Staged in(send, count_per_rank, dtype, true), out(recv, count_per_rank * static_cast<std::size_t>(size()), dtype, false);
  host_->allgather(in.data(), out.data(), count_per_rank, dtype);
  out.write_back(recv);
}

void Collectives::allgatherv(const void* send, std::size_t send_count, void* recv,
                             const std::vector<std::size_t>& recv_counts, DType dtype) const {
  if (Communicator* comm = for_location(location_of(cuda_device_ >= 0, send, recv)))
    return comm->allgatherv(send, send_count, recv, recv_counts, dtype);
  Staged in(send, send_count, dtype, true), out(recv, total(recv_counts), dtype, false);
  host_->allgatherv(in.data(), send_count, out.data(), recv_counts, dtype);
  out.write_back(recv);
}

void Collectives::alltoallv(const void* send, const std::vector<std::size_t>& send_counts, void* recv,
                            const std::vector<std::size_t>& recv_counts, DType dtype) const {
  if (Communicator* comm = for_location(location_of(cuda_device_ >= 0, send, recv)))
    return comm->alltoallv(send, send_counts, recv, recv_counts, dtype);
  Staged in(send, total(send_counts), dtype, true), out(recv, total(recv_counts), dtype, false);
  host_->alltoallv(in.data(), send_counts, out.data(), recv_counts, dtype);
  out.write_back(recv);
}

void Collectives::send(const void* buf, std::size_t count, DType dtype, int dest) const {
  if (Communicator* comm = for_location(location_of(cuda_device_ >= 0, buf))) return comm->send(buf, count, dtype, dest);
  Staged s(buf, count, dtype, true);
  host_->send(s.data(), count, dtype, dest);
}

void Collectives::recv(void* buf, std::size_t count, DType dtype, int source) const {
  if (Communicator* comm = for_location(location_of(cuda_device_ >= 0, buf))) return comm->recv(buf, count, dtype, source);
  Staged s(buf, count, dtype, false);
  host_->recv(s.data(), count, dtype, source);
  s.write_back(buf);
}

}  // namespace dpgnn::dist
