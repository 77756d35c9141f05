// NCCL_CHECK: run an NCCL call and throw dpgnn::IoError when it fails.
//
// Private to src/dist/ and compiled only with DPGNN_WITH_NCCL. As nccl-tests' NCCLCHECK,
// the message carries ncclGetErrorString of the result and ncclGetLastError, which holds
// the detail (which peer, which transport) that the result code alone does not.
#pragma once

#include <nccl.h>

#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn::dist::detail {

[[noreturn]] inline void throw_nccl_error(ncclResult_t code, const char* call, const char* file,
                                          int line) {
  std::string message = std::string(file) + ":" + std::to_string(line) + ": " + call +
                        " failed: " + ncclGetErrorString(code);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') message += std::string(" (last NCCL error: ") + last + ")";
  throw IoError(message);
}

}  // namespace dpgnn::dist::detail

#define NCCL_CHECK(call)                                                         \
  do {                                                                           \
    const ncclResult_t dpgnn_nccl_rc_ = (call);                                  \
    if (dpgnn_nccl_rc_ != ncclSuccess)                                           \
      ::dpgnn::dist::detail::throw_nccl_error(dpgnn_nccl_rc_, #call, __FILE__, __LINE__); \
  } while (0)
