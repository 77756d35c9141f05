// All-reduce benchmark in the format of nccl-tests' all_reduce_perf: for message sizes
// from -b to -e bytes (factor -f), the in-place sum of a float32 buffer over all ranks of
// the job, reporting time per call, algbw = bytes / time and busbw = algbw * 2(n-1)/n
// (dist/bandwidth.h), plus a #wrong column from a separate checked call (the verifier:
// rank r contributes (r+1)*(i%13+1), so every element must equal n(n+1)/2*(i%13+1)).
// The time is the slowest rank's mean over the timed iterations, after warm-up calls (as
// nccl-tests); the slowest rank's median call is printed too, as it resists the
// descheduling spikes of a shared machine.
// This is the cost of the trainer's one gradient all-reduce per step (DESIGN.md): a
// model of P float32 parameters moves 4P bytes.
//
//   mpiexec -n 2 --oversubscribe build/bench/bench_allreduce [-b 1K] [-e 256M] [-f 2]
//           [-n ITERS] [-w WARMUP] [-d cpu|cuda]
// -d cuda uses the NCCL communicator on CUDA buffers (builds with NCCL, one GPU per rank).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dpgnn/dist/bandwidth.h"
#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/communicator.h"
#include "dpgnn/dist/device.h"
#include "dpgnn/dist/environment.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/log.h"

namespace {

using dpgnn::UsageError;
using namespace dpgnn::dist;

struct Options {
  std::size_t min_bytes = 1024;
  std::size_t max_bytes = 256u << 20;
  std::size_t factor = 2;
  int iters = 0;   // 0: chosen per size
  int warmup = -1; // -1: chosen per size
  BufferLocation where = BufferLocation::host;
};

// "1024", "64K", "256M", "1G" -> bytes.
std::size_t parse_size(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  std::size_t mult = 1;
  const std::string suffix(end);
  if (suffix == "K" || suffix == "k") mult = 1u << 10;
  else if (suffix == "M" || suffix == "m") mult = 1u << 20;
  else if (suffix == "G" || suffix == "g") mult = 1u << 30;
  else if (!suffix.empty() || end == text.c_str())
    throw UsageError("bench_allreduce: " + flag + " '" + text + "' is not a size like 1024, 64K, 256M, 1G");
  return static_cast<std::size_t>(v) * mult;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw UsageError("bench_allreduce: " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "-b") o.min_bytes = parse_size(flag, value);
    else if (flag == "-e") o.max_bytes = parse_size(flag, value);
    else if (flag == "-f") o.factor = parse_size(flag, value);
    else if (flag == "-n") o.iters = std::atoi(value.c_str());
    else if (flag == "-w") o.warmup = std::atoi(value.c_str());
    else if (flag == "-d") {
      if (value == "cpu") o.where = BufferLocation::host;
      else if (value == "cuda") o.where = BufferLocation::cuda;
      else throw UsageError("bench_allreduce: -d must be cpu or cuda, got '" + value + "'");
    } else {
      throw UsageError("bench_allreduce: unknown option " + flag);
    }
  }
  if (o.min_bytes < 4 || o.max_bytes < o.min_bytes || o.factor < 2)
    throw UsageError("bench_allreduce: need 4 <= -b <= -e and -f >= 2");
  return o;
}

// Host or device buffer of `bytes`, filled from / read into host vectors.
struct Buffer {
  Buffer(BufferLocation where, std::size_t bytes) : where(where) {
    if (where == BufferLocation::host) host.resize(bytes / sizeof(float));
    else device = CudaBuffer(bytes);
  }
  float* data() { return where == BufferLocation::host ? host.data() : static_cast<float*>(device.data()); }
  void put(const std::vector<float>& v) {
    if (where == BufferLocation::host) std::copy(v.begin(), v.end(), host.begin());
    else device.copy_from_host(v.data(), v.size() * sizeof(float));
  }
  std::vector<float> get(std::size_t count) {
    if (where == BufferLocation::host) return std::vector<float>(host.begin(), host.begin() + count);
    std::vector<float> v(count);
    device.copy_to_host(v.data(), count * sizeof(float));
    return v;
  }
  BufferLocation where;
  std::vector<float> host;
  CudaBuffer device;
};

int run(int argc, char** argv) {
  const EnvironmentInfo& env = init_environment(&argc, &argv);
  const Options opt = parse(argc, argv);
  // The benchmark measures one backend: the device communicator for --where cuda.
  std::optional<Collectives> comms(Collectives::open(opt.where == BufferLocation::cuda));
  if (opt.where == BufferLocation::cuda && comms->device() == nullptr)
    throw UsageError("bench_allreduce: -d cuda measures NCCL; unset DPGNN_GPU_COLLECTIVES");
  Communicator* comm = opt.where == BufferLocation::cuda ? comms->device() : &comms->host();
  const int n = comm->size();
  Communicator* host_comm = &comms->host();  // for reductions of results
  if (env.world_rank == 0) {
    std::printf("# dpgnn bench_allreduce: backend %s, %d ranks, float32 sum in place; time = slowest "
                "rank's mean per call (algbw/busbw use it), median = slowest rank's median call\n",
                comm->backend(), n);
    std::printf("# %12s %12s %7s %7s %12s %12s %12s %12s %7s\n", "size(B)", "count", "type", "iters",
                "time(us)", "median(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  }
  Buffer buf(opt.where, opt.max_bytes);
  for (std::size_t bytes = opt.min_bytes; bytes <= opt.max_bytes; bytes *= opt.factor) {
    const std::size_t count = bytes / sizeof(float);
    const int iters = opt.iters > 0 ? opt.iters
                                    : static_cast<int>(std::clamp<std::size_t>((std::size_t{1} << 27) / bytes, 5, 100));
    const int warmup = opt.warmup >= 0 ? opt.warmup : std::max(2, iters / 10);

    // Verifier: one checked call.
    std::vector<float> pattern(count);
    for (std::size_t i = 0; i < count; ++i) pattern[i] = static_cast<float>((env.world_rank + 1) * (i % 13 + 1));
    buf.put(pattern);
    comm->allreduce_sum(buf.data(), count);
    const std::vector<float> got = buf.get(count);
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i)
      if (got[i] != static_cast<float>(n * (n + 1) / 2 * (i % 13 + 1))) ++wrong;
    host_comm->allreduce_sum(&wrong, 1);

    // Timed calls on zeros (sums stay 0: no overflow, no denormals).
    buf.put(std::vector<float>(count, 0.0f));
    for (int w = 0; w < warmup; ++w) comm->allreduce_sum(buf.data(), count);
    comm->barrier();
    std::vector<double> per_call(static_cast<std::size_t>(iters));
    const auto start = std::chrono::steady_clock::now();
    auto last = start;
    for (int it = 0; it < iters; ++it) {
      comm->allreduce_sum(buf.data(), count);
      const auto now = std::chrono::steady_clock::now();
      per_call[static_cast<std::size_t>(it)] = std::chrono::duration<double>(now - last).count();
      last = now;
    }
    double stats[2] = {std::chrono::duration<double>(last - start).count() / iters, 0.0};
    std::nth_element(per_call.begin(), per_call.begin() + iters / 2, per_call.end());
    stats[1] = per_call[static_cast<std::size_t>(iters / 2)];
    // Slowest rank's mean and median: max via all-gather (the interface has only sums).
    std::vector<double> all(2 * static_cast<std::size_t>(n));
    host_comm->allgather(stats, all.data(), 2);
    double seconds = 0.0, median = 0.0;
    for (int p = 0; p < n; ++p) {
      seconds = std::max(seconds, all[2 * static_cast<std::size_t>(p)]);
      median = std::max(median, all[2 * static_cast<std::size_t>(p) + 1]);
    }
    if (env.world_rank == 0)
      std::printf("  %12zu %12zu %7s %7d %12.2f %12.2f %12.3f %12.3f %7lld\n", bytes, count, "float",
                  iters, seconds * 1e6, median * 1e6, algbw(bytes, seconds) / 1e9,
                  busbw(CollectiveKind::allreduce, bytes, seconds, n) / 1e9,
                  static_cast<long long>(wrong));
    std::fflush(stdout);
  }
  comms.reset();  // every communicator before MPI_Finalize
  finalize_environment();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  dpgnn::init_logging();
  int code = dpgnn::kExitInternal;
  try {
    code = run(argc, argv);
  } catch (const dpgnn::Error& e) {
    spdlog::error("{}", e.what());
    code = e.exit_code();
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
  }
  dpgnn::abort_peers_on_error(code);
  return code;
}
