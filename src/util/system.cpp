#include "dpgnn/util/system.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>

namespace dpgnn {
namespace {

int collect_blas(struct dl_phdr_info* info, size_t, void* data) {
  auto* paths = static_cast<std::string*>(data);
  const std::string name = info->dlpi_name ? info->dlpi_name : "";
  const auto slash = name.find_last_of('/');
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  if (base.rfind("libblas.so", 0) == 0 || base.rfind("libopenblas", 0) == 0 ||
      base.rfind("libmkl_rt", 0) == 0 || base.rfind("libblis", 0) == 0) {
    if (!paths->empty()) *paths += ";";
    *paths += name;
  }
  return 0;
}

}  // namespace

BlasInfo loaded_blas() {
  BlasInfo info;
  std::string paths;
  dl_iterate_phdr(collect_blas, &paths);
  if (paths.empty()) {
    info.vendor = "none";
    return info;
  }
  std::error_code ec;
  std::string first = paths.substr(0, paths.find(';'));
  const auto resolved = std::filesystem::canonical(first, ec);
  info.library_path = ec ? first : resolved.string();
  using ConfigFn = char* (*)();
  if (auto fn = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    info.vendor = "openblas";
    info.config = fn();
    using ParallelFn = int (*)();
    if (auto par = reinterpret_cast<ParallelFn>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"))) {
      const int p = par();  // OpenBLAS's interface: 0 sequential, 1 pthreads, 2 OpenMP
      info.threading = p == 0 ? "sequential" : p == 1 ? "pthreads" : p == 2 ? "openmp" : "";
    }
  } else if (paths.find("mkl") != std::string::npos) {
    info.vendor = "mkl";
  } else if (paths.find("blis") != std::string::npos) {
    info.vendor = "blis";
  } else if (info.library_path.find("/blas/") != std::string::npos ||
             info.library_path.find("netlib") != std::string::npos) {
    info.vendor = "reference";
  } else {
    info.vendor = "unknown";
  }
  return info;
}

void report_blas(int threads) {
  const BlasInfo b = loaded_blas();
  if (b.is_reference()) {
    spdlog::warn(
        "BLAS: the slow reference BLAS is loaded ({}); install an optimised one "
        "(Debian: apt-get install libopenblas0-openmp) for 30-50x faster training",
        b.library_path);
  } else if (b.threading == "pthreads" && threads > 1) {
    spdlog::warn(
        "BLAS: OpenBLAS's pthreads build is loaded ({}); with {} threads its thread pool competes "
        "with LibTorch's OpenMP threads and steps run 1.5-2x slower. Use the OpenMP build (Debian: "
        "apt-get install libopenblas0-openmp, and select it with update-alternatives for "
        "libblas.so.3 and libopenblas.so.0; scripts/install-deps.sh does both)",
        b.library_path, threads);
  } else if (b.vendor == "none") {
    spdlog::debug("BLAS: no libblas loaded in this process");
  } else {
    spdlog::info("BLAS: {} ({}{}{})", b.vendor, b.library_path, b.config.empty() ? "" : ", ",
                 b.config);  // the config names the threading (USE_OPENMP) for OpenBLAS
  }
}

bool set_blas_threads(int threads) {
  using SetFn = void (*)(int);
  if (auto fn = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    fn(std::max(1, threads));
    return true;
  }
  return false;
}

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

int default_threads_per_rank(int local_ranks) {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n <= 4096) return static_cast<int>(n);
    spdlog::warn("OMP_NUM_THREADS='{}' is not a positive integer; ignored (using cores / local ranks)", env);
  }
  return std::max(1, available_cores() / std::max(1, local_ranks));
}

void reexec_with_tuned_malloc(char** argv) {
#if defined(__GLIBC__)
  if (const char* off = std::getenv("DPGNN_MALLOC_DEFAULTS"); off != nullptr && std::string(off) == "1") return;
  const char* old = std::getenv("GLIBC_TUNABLES");
  const std::string current = old != nullptr ? old : "";
  if (current.find("glibc.malloc.hugetlb") != std::string::npos) return;  // tuned already
  const std::string tuned = current.empty() ? kTunedMalloc : current + ":" + kTunedMalloc;
  if (setenv("GLIBC_TUNABLES", tuned.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: run on with glibc's defaults
  if (old != nullptr) setenv("GLIBC_TUNABLES", current.c_str(), 1); else unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

std::int64_t peak_rss_bytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::int64_t>(ru.ru_maxrss) * 1024;
}

}  // namespace dpgnn
