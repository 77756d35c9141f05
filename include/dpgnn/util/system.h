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
  // OpenBLAS's threading (openblas_get_parallel()): "sequential", "pthreads", "openmp", or ""
  // for other vendors.
  std::string threading;
  bool is_reference() const { return vendor == "reference"; }
};

// Inspects the shared objects mapped into this process.
BlasInfo loaded_blas();
// Logs the BLAS in use; warns when it is the slow reference implementation, or when it is
// OpenBLAS's pthreads build and more than one compute thread runs (its own thread pool then
// competes with LibTorch's OpenMP threads for the same cores: measured 1.5-2x slower steps,
// docs/benchmarks.md "Where a step's time goes").
void report_blas(int threads);
// Sets OpenBLAS's thread count when OpenBLAS is loaded; returns false otherwise.
bool set_blas_threads(int threads);
// Number of CPU cores this process may run on (sched_getaffinity).
int available_cores();
// Threads per rank when the config does not choose: OMP_NUM_THREADS when it is set to a
// positive integer (launch/dpgnn-mpirun sets it; PyTorch honours it too), else
// cores / local ranks, at least 1.
int default_threads_per_rank(int local_ranks);
// glibc's malloc tuned for a training step, as GLIBC_TUNABLES (read by glibc only when a
// program starts): transparent huge pages for the heap and large blocks, the heap grown 256 MiB
// at a time and not trimmed. A step allocates and frees the same large tensors every step and
// gathers feature rows at random; with glibc's defaults every large block is a fresh mmap whose
// every 4 KiB page faults on first touch (on virtual machines a hypervisor exit), and the gather
// misses the TLB. Measured 1.5-2x faster steps (docs/benchmarks.md, "Where a step's time goes").
inline constexpr const char* kTunedMalloc =
    "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=1073741824:"
    "glibc.malloc.trim_threshold=4294967296:glibc.malloc.top_pad=268435456";
// Replaces this process by the same program with kTunedMalloc added to GLIBC_TUNABLES (same pid,
// arguments and environment otherwise), unless GLIBC_TUNABLES already sets glibc.malloc.hugetlb
// (a re-executed or user-tuned process) or DPGNN_MALLOC_DEFAULTS=1. Call first thing in main,
// before any thread or MPI; returns (and changes nothing) when it does not re-execute or when the
// exec fails. Off glibc it does nothing.
void reexec_with_tuned_malloc(char** argv);
// Peak resident set size of this process in bytes (getrusage).
std::int64_t peak_rss_bytes();

}  // namespace dpgnn
