// Which CUDA device a rank uses, and a small owner of device memory.
//
// Rank -> GPU binding (DESIGN.md decision 9): device = local rank modulo the number of
// visible devices, so P ranks on a node with G GPUs share them round-robin; the CUDA
// runtime already numbers only the devices in CUDA_VISIBLE_DEVICES, so a launcher that
// restricts them per rank (launch/, SLURM's --gpus-per-task) gives each rank device 0.
// Everything here compiles without CUDA: the queries then report "no CUDA in this build"
// and the requests throw UsageError saying which CMake option to set.
#pragma once

#include <cstddef>
#include <string>

namespace dpgnn::dist {

bool built_with_cuda();
bool built_with_nccl();

// Number of CUDA devices this process can see; 0 without CUDA, a driver or a GPU. Never throws.
int visible_cuda_devices();
// Empty when a CUDA device is usable; otherwise why not, starting with
// "no CUDA in this build" or "no CUDA GPU visible: " (tests print it when they skip).
std::string cuda_unavailable_reason();

// local_rank % visible_devices. Throws UsageError when visible_devices <= 0.
int cuda_device_for_local_rank(int local_rank, int visible_devices);
// Chooses this rank's device from its local rank, makes it current (cudaSetDevice) and
// returns its index. Throws UsageError when CUDA is unavailable (with the reason).
int bind_cuda_device(int local_rank);
// Makes CUDA device `device` current and returns it. Throws UsageError when CUDA is
// unavailable or `device` is not one of the visible devices.
int bind_cuda_device_index(int device);

// Free and total memory of the current CUDA device in bytes (cudaMemGetInfo). UsageError when
// CUDA is unavailable or in a build without CUDA.
struct DeviceMemory {
  std::size_t free = 0, total = 0;
};
DeviceMemory cuda_memory_info();

// True when `ptr` points into CUDA device memory (cudaPointerGetAttributes); false for host
// memory and in a build without CUDA. Never throws.
bool is_cuda_pointer(const void* ptr);
// Synchronous copies between host and device memory, for staging device buffers through
// host memory (collectives.h). IoError when CUDA fails, UsageError in a build without CUDA.
void copy_to_host(void* dst, const void* device_src, std::size_t bytes);
void copy_to_device(void* device_dst, const void* src, std::size_t bytes);

// Device memory for tests and benchmarks of the CUDA backend (the trainer uses tensors).
class CudaBuffer {
 public:
  CudaBuffer() = default;
  explicit CudaBuffer(std::size_t bytes);  // cudaMalloc on the current device
  ~CudaBuffer();
  CudaBuffer(CudaBuffer&& other) noexcept;
  CudaBuffer& operator=(CudaBuffer&& other) noexcept;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  void copy_from_host(const void* src, std::size_t bytes);
  void copy_to_host(void* dst, std::size_t bytes) const;

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace dpgnn::dist
