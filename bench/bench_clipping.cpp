// Cost of per-subgraph clipping: one DP step over one non-private step, same model and batch.
//
//   bench_clipping --mode dp|nonprivate|naive   one mode in this process: median seconds per
//                                               step and this process's peak RSS
//   bench_clipping --mode all                   runs the three modes as child processes (so
//                                               each peak RSS is its own) and prints ratios
//   bench_clipping --mode pair                  nonprivate and dp steps alternating in this
//                                               process (both see the same machine load): best
//                                               and median of each, and the ratio of the bests
//
// dp:         forward + ghost-norm per-subgraph norms + book-keeping clipped sum
//             (model/clipping.h, clipped_gradient_sum; --kernel picks the norm kernel)
// nonprivate: forward + autograd backward w.r.t. the parameters, gradient sum (gradient_sum)
// naive:      one forward + backward per subgraph (the test oracle, tests/model/naive_oracle.h)
// Default workload (issue 5): 2-layer GCN, 602 -> 256 -> 41, 10,000 subgraphs of 1..17 nodes
// (uniform sizes, a random spanning tree plus `size` random chords inside each subgraph, like
// a DRW-R batch on Reddit), float32, 2 threads.
// --device cuda (or cuda:N) runs the model and the batch on a GPU (the batch is drawn on the
// host and copied once); each timed step then ends with a device synchronisation, so that the
// time covers the GPU's work. peak_rss_mb stays the host process's.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dpgnn/model/clipping.h"
#include "dpgnn/model/gnn.h"
#include "dpgnn/model/optimizer.h"
#include "dpgnn/util/log.h"
#include "dpgnn/util/system.h"
#include "model/naive_oracle.h"
#include "model/random_batch.h"

namespace {

using namespace dpgnn::model;

struct Args {
  std::string mode = "all";
  std::int64_t subgraphs = 10000;
  std::int64_t min_size = 1;
  std::int64_t max_size = 17;
  std::int64_t features = 602;
  int hidden = 256;
  int classes = 41;
  int layers = 2;
  std::string arch = "gcn";
  int threads = 2;
  int repeats = 5;
  bool sorted = false;  // order the batch's subgraphs by size (lets buckets be views)
  std::string kernel = "auto";  // dp: norm kernel, auto | segment | size-class (clipping.h)
  std::uint64_t seed = 1;
  std::string device = "cpu";  // cpu | cuda | cuda:N
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "bench_clipping: " << problem
            << "\nusage: bench_clipping [--mode dp|nonprivate|naive|all] [--subgraphs N]"
               " [--min-size k] [--max-size K] [--features F] [--hidden H] [--classes C] [--layers L]"
               " [--arch gcn|sage|gin|mlp] [--threads T] [--repeats R] [--sorted] [--seed S]"
               " [--kernel auto|segment|size-class] [--device cpu|cuda|cuda:N]\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value after " + k);
      return argv[++i];
    };
    if (k == "--mode") a.mode = value();
    else if (k == "--subgraphs") a.subgraphs = std::stoll(value());
    else if (k == "--min-size") a.min_size = std::stoll(value());
    else if (k == "--max-size") a.max_size = std::stoll(value());
    else if (k == "--features") a.features = std::stoll(value());
    else if (k == "--hidden") a.hidden = std::stoi(value());
    else if (k == "--classes") a.classes = std::stoi(value());
    else if (k == "--layers") a.layers = std::stoi(value());
    else if (k == "--arch") a.arch = value();
    else if (k == "--threads") a.threads = std::stoi(value());
    else if (k == "--repeats") a.repeats = std::stoi(value());
    else if (k == "--sorted") a.sorted = true;
    else if (k == "--kernel") a.kernel = value();
    else if (k == "--seed") a.seed = std::stoull(value());
    else if (k == "--device") a.device = value();
    else usage("unknown argument " + k);
  }
  if (a.mode != "dp" && a.mode != "nonprivate" && a.mode != "naive" && a.mode != "all" && a.mode != "pair") {
    usage("--mode must be dp, nonprivate, naive, all or pair");
  }
  if (a.kernel != "auto" && a.kernel != "segment" && a.kernel != "size-class") {
    usage("--kernel must be auto, segment or size-class");
  }
  try {
    if (a.device != "cpu" && !c10::Device(a.device).is_cuda()) throw std::invalid_argument(a.device);
  } catch (const std::exception&) {
    usage("--device must be cpu, cuda or cuda:N, got " + a.device);
  }
  if (a.device != "cpu" && !at::hasCUDA())
    usage("--device " + a.device + ": this LibTorch has no CUDA device (a CPU-only build, or no GPU visible)");
  if (a.subgraphs < 1 || a.min_size < 1 || a.max_size < a.min_size || a.repeats < 1 || a.threads < 1) usage("sizes must be >= 1");
  return a;
}

Batch make_workload(const Args& a, c10::Device device) {
  std::mt19937_64 rng(a.seed);
  testing::RandomBatchSpec spec;
  std::uniform_int_distribution<std::int64_t> size(a.min_size, a.max_size);
  for (std::int64_t s = 0; s < a.subgraphs; ++s) spec.sizes.push_back(size(rng));
  if (a.sorted) std::sort(spec.sizes.begin(), spec.sizes.end());
  spec.features = 1;  // replaced below without a host copy of the big feature matrix
  spec.classes = a.classes;
  spec.extra_edge_factor = 1.0;
  spec.seed = a.seed + 1;
  spec.dtype = at::kFloat;
  Batch b = testing::random_batch(spec);
  auto gen = at::detail::createCPUGenerator(a.seed + 2);
  b.x = at::empty({b.num_nodes(), a.features}, at::kFloat).normal_(0.0, 1.0, gen);
  if (!device.is_cpu()) {
    b.x = b.x.to(device);
    b.node_ptr = b.node_ptr.to(device);
    b.root = b.root.to(device);
    b.y = b.y.to(device);
    b.node_key = b.node_key.to(device);
    if (b.loss_rows.defined()) b.loss_rows = b.loss_rows.to(device);
    b.block = b.block.to(device, b.x.scalar_type());
  }
  return b;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_one(const Args& a) {
  dpgnn::init_logging();
  set_compute_threads(a.threads);
  dpgnn::report_blas(a.threads);
  const c10::Device device(a.device);
  const Batch batch = make_workload(a, device);
  ModelConfig cfg;
  cfg.arch = parse_arch(a.arch);
  cfg.layers = a.layers;
  cfg.hidden = a.hidden;
  cfg.in_features = static_cast<int>(a.features);
  cfg.num_classes = a.classes;
  const Gnn model(cfg, 7, device);
  at::Tensor flat = at::zeros({model.num_parameters()}, at::TensorOptions().dtype(at::kFloat).device(device));
  // On a GPU the calls return before the kernels finish: a host read of one element waits
  // for them (the stream is in order), so the clock stops when the step is done.
  auto finish = [&] {
    if (!device.is_cpu()) (void)flat[0].item<float>();
  };
  const ClipConfig clip = ClipConfig::flat(1.0);
  ClipOptions options;
  options.kernel = a.kernel == "segment"      ? NormKernel::kSegment
                   : a.kernel == "size-class" ? NormKernel::kSizeClass
                                              : NormKernel::kAuto;
  auto step = [&](std::int64_t t) {
    const DropoutKey key{1, t};
    if (a.mode == "dp") {
      clipped_gradient_sum(model, batch, clip, key, flat, options);
    } else if (a.mode == "nonprivate") {
      gradient_sum(model, batch, key, flat);
    } else {
      flat.copy_(testing::naive_per_sample(model, batch, key, clip, false).clipped_sum);
    }
    finish();
  };
  if (a.mode == "pair") {
    std::vector<double> t_np, t_dp;
    auto timed = [&](auto&& f) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      finish();
      return seconds_since(t0);
    };
    gradient_sum(model, batch, DropoutKey{1, 0}, flat);  // warm-up
    clipped_gradient_sum(model, batch, clip, DropoutKey{1, 0}, flat, options);
    for (int r = 0; r < a.repeats; ++r) {
      const DropoutKey key{1, static_cast<std::int64_t>(r + 1)};
      t_np.push_back(timed([&] { gradient_sum(model, batch, key, flat); }));
      t_dp.push_back(timed([&] { clipped_gradient_sum(model, batch, clip, key, flat, options); }));
    }
    std::sort(t_np.begin(), t_np.end());
    std::sort(t_dp.begin(), t_dp.end());
    std::printf("mode=pair device=%s nodes=%lld edges=%lld params=%lld threads=%d repeats=%d nonprivate_best=%.6f "
                "nonprivate_median=%.6f dp_best=%.6f dp_median=%.6f ratio_best=%.4f ratio_median=%.4f\n",
                device.str().c_str(), static_cast<long long>(batch.num_nodes()), static_cast<long long>(batch.block.num_edges()),
                static_cast<long long>(model.num_parameters()), at::get_num_threads(), a.repeats, t_np.front(),
                t_np[t_np.size() / 2], t_dp.front(), t_dp[t_dp.size() / 2], t_dp.front() / t_np.front(),
                t_dp[t_dp.size() / 2] / t_np[t_np.size() / 2]);
    return 0;
  }
  const int repeats = a.mode == "naive" ? 1 : a.repeats;
  if (a.mode != "naive") step(0);  // warm-up: allocator, thread pool
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    step(r + 1);
    times.push_back(seconds_since(t0));
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf("mode=%s device=%s nodes=%lld edges=%lld params=%lld threads=%d repeats=%d seconds_per_step=%.6f "
              "peak_rss_mb=%.1f checksum=%.6e\n",
              a.mode.c_str(), device.str().c_str(), static_cast<long long>(batch.num_nodes()),
              static_cast<long long>(batch.block.num_edges()), static_cast<long long>(model.num_parameters()),
              at::get_num_threads(), repeats, median,
              static_cast<double>(dpgnn::peak_rss_bytes()) / (1024.0 * 1024.0),
              flat.abs().sum().item<double>());
  return 0;
}

std::map<std::string, std::string> run_child(const std::string& self, const Args& a, const std::string& mode) {
  std::ostringstream cmd;
  cmd << self << " --mode " << mode << " --subgraphs " << a.subgraphs << " --min-size " << a.min_size
      << " --max-size " << a.max_size
      << " --features " << a.features << " --hidden " << a.hidden << " --classes " << a.classes
      << " --layers " << a.layers << " --arch " << a.arch << " --threads " << a.threads
      << " --repeats " << a.repeats << " --seed " << a.seed << " --kernel " << a.kernel << " --device " << a.device
      << (a.sorted ? " --sorted" : "");
  FILE* pipe = popen(cmd.str().c_str(), "r");
  if (pipe == nullptr) usage("cannot start " + cmd.str());
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  if (pclose(pipe) != 0) usage("child failed: " + cmd.str() + "\n" + out);
  std::cout << out;
  std::map<std::string, std::string> kv;
  std::istringstream in(out.substr(out.rfind("mode=")));
  std::string tok;
  while (in >> tok) {
    const auto eq = tok.find('=');
    if (eq != std::string::npos) kv[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
  return kv;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (a.mode != "all") return run_one(a);
  const std::string exe = argv[0];
  auto np = run_child(exe, a, "nonprivate");
  auto dp = run_child(exe, a, "dp");
  auto naive = run_child(exe, a, "naive");
  const double t_np = std::stod(np["seconds_per_step"]);
  std::printf("\n%-11s %14s %12s %14s\n", "mode", "s/step", "vs nonpriv", "peak RSS MB");
  for (const auto& [name, kv] : std::vector<std::pair<std::string, std::map<std::string, std::string>>>{
           {"nonprivate", np}, {"dp", dp}, {"naive", naive}}) {
    const double t = std::stod(kv.at("seconds_per_step"));
    std::printf("%-11s %14.4f %12.3f %14s\n", name.c_str(), t, t / t_np, kv.at("peak_rss_mb").c_str());
  }
  return 0;
}
