// MPI_CHECK: run an MPI call and throw dpgnn::IoError when it fails.
//
// Private to src/dist/ (mpi.h stays out of public headers). The message names the source
// location, the call as written and MPI's own error string, which is enough to act on
// (the pattern of nccl-tests' NCCLCHECK). Failures only come back as return codes on
// communicators with MPI_ERRORS_RETURN, which environment.cpp and mpi_communicator.cpp set.
#pragma once

#include <mpi.h>

#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn::dist::detail {

inline std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "unknown MPI error";
  return std::string(text, static_cast<std::size_t>(length));
}

[[noreturn]] inline void throw_mpi_error(int code, const char* call, const char* file, int line) {
  throw IoError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                mpi_error_string(code) + " (MPI error " + std::to_string(code) + ")");
}

}  // namespace dpgnn::dist::detail

#define MPI_CHECK(call)                                                        \
  do {                                                                         \
    const int dpgnn_mpi_rc_ = (call);                                          \
    if (dpgnn_mpi_rc_ != MPI_SUCCESS)                                          \
      ::dpgnn::dist::detail::throw_mpi_error(dpgnn_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
