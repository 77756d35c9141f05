// CUDA_CHECK and NCCL_CHECK (private headers of src/dist/) turn a failing result into an
// IoError that names the source location, the call as written and the library's own
// message. Failing results are passed directly, so no GPU is needed; the expected text
// comes from the libraries' own cudaGetErrorString / ncclGetErrorString.
// (MPI_CHECK is tested under MPI in test_mpi_communicator.cpp.)
#include <gtest/gtest.h>

#include <string>

#include "cuda_check.h"
#include "dpgnn/util/error.h"
#include "nccl_check.h"

namespace {

TEST(CudaCheck, AFailingCallThrowsIoErrorWithCudasMessage) {
  try {
    CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "expected IoError";
  } catch (const dpgnn::IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorInvalidValue failed"), std::string::npos) << what;
    EXPECT_NE(what.find(cudaGetErrorString(cudaErrorInvalidValue)), std::string::npos) << what;
    EXPECT_NE(what.find("test_check_macros.cpp:"), std::string::npos) << what;
  }
}

TEST(CudaCheck, ASuccessfulCallDoesNotThrow) { EXPECT_NO_THROW(CUDA_CHECK(cudaSuccess)); }

TEST(NcclCheck, AFailingCallThrowsIoErrorWithNcclsMessage) {
  try {
    NCCL_CHECK(ncclInvalidArgument);
    FAIL() << "expected IoError";
  } catch (const dpgnn::IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ncclInvalidArgument failed"), std::string::npos) << what;
    EXPECT_NE(what.find(ncclGetErrorString(ncclInvalidArgument)), std::string::npos) << what;
  }
}

TEST(NcclCheck, ASuccessfulCallDoesNotThrow) { EXPECT_NO_THROW(NCCL_CHECK(ncclSuccess)); }

}  // namespace
