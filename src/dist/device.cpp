// Rank -> CUDA device binding and device memory (see device.h).
//
// Compiled in every build; the CUDA runtime is used only under DPGNN_WITH_CUDA (a
// per-target definition of dpgnn_dist), so a CPU build answers "no CUDA in this build".
#include "dpgnn/dist/device.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "dpgnn/util/error.h"

#ifdef DPGNN_WITH_CUDA
#include "cuda_check.h"
#endif

namespace dpgnn::dist {

namespace {
const char* const kNoCudaBuild =
    "no CUDA in this build: reconfigure with -DDPGNN_WITH_CUDA=ON (and -DDPGNN_WITH_NCCL=ON for "
    "multi-GPU training)";

[[maybe_unused]] std::string visible_devices_note() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v == nullptr ? std::string("CUDA_VISIBLE_DEVICES unset")
                      : std::string("CUDA_VISIBLE_DEVICES='") + v + "'";
}
}  // namespace

bool built_with_cuda() {
#ifdef DPGNN_WITH_CUDA
  return true;
#else
  return false;
#endif
}

bool built_with_nccl() {
#ifdef DPGNN_WITH_NCCL
  return true;
#else
  return false;
#endif
}

std::string cuda_unavailable_reason() {
#ifdef DPGNN_WITH_CUDA
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky error so later calls start clean
    return std::string("no CUDA GPU visible: cudaGetDeviceCount: ") + cudaGetErrorString(rc) +
           " (" + visible_devices_note() + ")";
  }
  if (count == 0) return "no CUDA GPU visible: cudaGetDeviceCount returned 0 (" + visible_devices_note() + ")";
  return "";
#else
  return kNoCudaBuild;
#endif
}

int visible_cuda_devices() {
#ifdef DPGNN_WITH_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

int cuda_device_for_local_rank(int local_rank, int visible_devices) {
  if (visible_devices <= 0)
    throw UsageError("dist: cannot choose a CUDA device for local rank " +
                     std::to_string(local_rank) + ": no device is visible");
  if (local_rank < 0)
    throw UsageError("dist: local rank must be >= 0, got " + std::to_string(local_rank));
  return local_rank % visible_devices;
}

int bind_cuda_device(int local_rank) {
  const std::string reason = cuda_unavailable_reason();
  if (!reason.empty()) throw UsageError("dist: device 'cuda' requested but " + reason);
  return bind_cuda_device_index(cuda_device_for_local_rank(local_rank, visible_cuda_devices()));
}

int bind_cuda_device_index(int device) {
  const std::string reason = cuda_unavailable_reason();
  if (!reason.empty()) throw UsageError("dist: device 'cuda:" + std::to_string(device) + "' requested but " + reason);
  const int visible = visible_cuda_devices();
  if (device < 0 || device >= visible)
    throw UsageError("dist: device 'cuda:" + std::to_string(device) + "' requested but " + std::to_string(visible) +
                     " CUDA device(s) are visible (numbered from 0 among CUDA_VISIBLE_DEVICES)");
#ifdef DPGNN_WITH_CUDA
  CUDA_CHECK(cudaSetDevice(device));
#endif
  return device;
}

DeviceMemory cuda_memory_info() {
#ifdef DPGNN_WITH_CUDA
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) throw UsageError(why);
  DeviceMemory m;
  CUDA_CHECK(cudaMemGetInfo(&m.free, &m.total));
  return m;
#else
  throw UsageError(kNoCudaBuild);
#endif
}

bool is_cuda_pointer(const void* ptr) {
#ifdef DPGNN_WITH_CUDA
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    (void)cudaGetLastError();  // an unknown pointer is host memory; clear the sticky error
    return false;
  }
  return attr.type == cudaMemoryTypeDevice;
#else
  (void)ptr;
  return false;
#endif
}

void copy_to_host(void* dst, const void* device_src, std::size_t bytes) {
#ifdef DPGNN_WITH_CUDA
  // The buffer may have been written by kernels on LibTorch's streams of this device.
  CUDA_CHECK(cudaDeviceSynchronize());
  if (bytes > 0) CUDA_CHECK(cudaMemcpy(dst, device_src, bytes, cudaMemcpyDeviceToHost));
#else
  (void)dst, (void)device_src, (void)bytes;
  throw UsageError(std::string("dist: copy_to_host: ") + kNoCudaBuild);
#endif
}

void copy_to_device(void* device_dst, const void* src, std::size_t bytes) {
#ifdef DPGNN_WITH_CUDA
  if (bytes > 0) CUDA_CHECK(cudaMemcpy(device_dst, src, bytes, cudaMemcpyHostToDevice));
#else
  (void)device_dst, (void)src, (void)bytes;
  throw UsageError(std::string("dist: copy_to_device: ") + kNoCudaBuild);
#endif
}

CudaBuffer::CudaBuffer(std::size_t bytes) {
#ifdef DPGNN_WITH_CUDA
  if (bytes > 0) CUDA_CHECK(cudaMalloc(&data_, bytes));
  bytes_ = bytes;
#else
  (void)bytes;
  throw UsageError(std::string("dist: CudaBuffer: ") + kNoCudaBuild);
#endif
}

CudaBuffer::~CudaBuffer() {
#ifdef DPGNN_WITH_CUDA
  if (data_ != nullptr) (void)cudaFree(data_);  // never throw from a destructor
#endif
}

CudaBuffer::CudaBuffer(CudaBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

CudaBuffer& CudaBuffer::operator=(CudaBuffer&& other) noexcept {
  if (this != &other) {
    CudaBuffer old(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void CudaBuffer::copy_from_host(const void* src, std::size_t bytes) {
  if (bytes > bytes_)
    throw UsageError("dist: CudaBuffer::copy_from_host: " + std::to_string(bytes) +
                     " bytes do not fit in a buffer of " + std::to_string(bytes_));
#ifdef DPGNN_WITH_CUDA
  if (bytes > 0) CUDA_CHECK(cudaMemcpy(data_, src, bytes, cudaMemcpyHostToDevice));
#else
  (void)src;
#endif
}

void CudaBuffer::copy_to_host(void* dst, std::size_t bytes) const {
  if (bytes > bytes_)
    throw UsageError("dist: CudaBuffer::copy_to_host: " + std::to_string(bytes) +
                     " bytes requested from a buffer of " + std::to_string(bytes_));
#ifdef DPGNN_WITH_CUDA
  if (bytes > 0) CUDA_CHECK(cudaMemcpy(dst, data_, bytes, cudaMemcpyDeviceToHost));
#else
  (void)dst;
#endif
}

}  // namespace dpgnn::dist
