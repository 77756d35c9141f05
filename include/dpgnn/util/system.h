// Process-level facts and settings: which BLAS is loaded, threads per rank, memory.
//
// Debian's LibTorch calls whatever libblas.so.3 is installed; the reference BLAS is
// 30-50x slower than OpenBLAS for our matmuls, so start-up says which one is loaded and
// warns on the reference one. LibTorch's OpenMP pool and OpenBLAS's own pthreads must not
// both run free (measured 3-10x slower steps): set_blas_threads() pins OpenBLAS, and the
// LibTorch side is pinned in model/ (which owns the LibTorch dependency).
#pragma once

#include <cstdint>
#include <string>

namespace dpgnn {

struct BlasInfo {
  std::string library_path;  // resolved path of the loaded libblas, or "" when none is loaded
  std::string vendor;        // "openblas", "mkl", "blis", "reference", "unknown" or "none"
  std::string config;        // e.g. openblas_get_config() output
  bool is_reference() const { return vendor == "reference"; }
};

// Inspects the shared objects mapped into this process.
BlasInfo loaded_blas();
// Logs the BLAS in use; warns when it is the slow reference implementation.
void report_blas();
// Sets OpenBLAS's thread count when OpenBLAS is loaded; returns false otherwise.
bool set_blas_threads(int threads);
// Number of CPU cores this process may run on (sched_getaffinity).
int available_cores();
// Threads per rank when the config does not choose: OMP_NUM_THREADS when it is set to a
// positive integer (launch/dpgnn-mpirun sets it; PyTorch honours it too), else
// cores / local ranks, at least 1.
int default_threads_per_rank(int local_ranks);
// Peak resident set size of this process in bytes (getrusage).
std::int64_t peak_rss_bytes();

}  // namespace dpgnn
