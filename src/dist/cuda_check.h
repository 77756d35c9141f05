// CUDA_CHECK: run a CUDA runtime call and throw dpgnn::IoError when it fails.
//
// Private to src/dist/ and compiled only with DPGNN_WITH_CUDA. The message names the
// source location, the call and cudaGetErrorString of the result.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn::dist::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* call, const char* file,
                                          int line) {
  throw IoError(std::string(file) + ":" + std::to_string(line) + ": " + call +
                " failed: " + cudaGetErrorString(code) + " (" + cudaGetErrorName(code) + ")");
}

}  // namespace dpgnn::dist::detail

#define CUDA_CHECK(call)                                                         \
  do {                                                                           \
    const cudaError_t dpgnn_cuda_rc_ = (call);                                   \
    if (dpgnn_cuda_rc_ != cudaSuccess)                                           \
      ::dpgnn::dist::detail::throw_cuda_error(dpgnn_cuda_rc_, #call, __FILE__, __LINE__); \
  } while (0)
