// Full-neighbourhood inference must not hold O(CSR entries x width) memory (issue 12).
//
// A 3-million-entry graph at width 256 is evaluated in a child process whose address space
// (RLIMIT_AS) is capped at what it already maps plus 1.5 GB: the evaluator's CSR SpMM fits
// (its peak is O(nodes x width)), while the gather/scatter that materialises one message
// per CSR entry (3M x 256 floats = 3 GB; what the forward did before the SpMM) must fail
// under the same cap, which shows the cap is tight enough to catch a return of it.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/torch.h>

#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/local_group.h"
#include "dpgnn/model/gnn.h"
#include "dpgnn/partition/shard.h"
#include "evaluator.h"

namespace dpgnn::train {
namespace {

constexpr std::int64_t kNodes = 60000, kPerNode = 25, kWidth = 256, kClasses = 8;
constexpr std::uint64_t kBudget = 1536ull << 20;  // bytes above what the child maps at the start

// One rank owning a random symmetric multigraph of kNodes nodes, 2 * kPerNode entries a node.
partition::Shard random_shard() {
  std::mt19937_64 rng(5);
  std::vector<std::pair<std::int32_t, std::int32_t>> edges;
  for (std::int32_t i = 0; i < kNodes; ++i)
    for (int k = 0; k < kPerNode; ++k) {
      auto j = static_cast<std::int32_t>(rng() % (kNodes - 1));
      if (j >= i) ++j;
      edges.emplace_back(i, j);
      edges.emplace_back(j, i);
    }
  std::vector<graph::EdgeIdx> ip(kNodes + 1, 0);
  for (const auto& e : edges) ++ip[e.first + 1];
  for (std::int64_t i = 0; i < kNodes; ++i) ip[i + 1] += ip[i];
  std::vector<graph::NodeId> idx(edges.size());
  std::vector<graph::EdgeIdx> pos(ip.begin(), ip.end() - 1);
  for (const auto& e : edges) idx[pos[e.first]++] = e.second;
  partition::Shard s;
  s.file = "random";
  s.meta.num_nodes = kNodes;
  s.meta.num_edges = static_cast<std::int64_t>(edges.size());
  s.meta.num_features = kWidth;
  s.meta.num_classes = kClasses;
  s.part_offsets = {0, kNodes};
  s.rank_offsets = {0, kNodes};
  s.begin = 0;
  s.end = kNodes;
  s.rows = graph::CsrGraph(std::move(ip), std::move(idx), kNodes);
  for (std::int64_t v = 0; v < kNodes; ++v) s.degrees.push_back(s.rows.out_degree(v));
  s.features.resize(static_cast<std::size_t>(kNodes * kWidth));
  std::normal_distribution<float> g;
  for (auto& x : s.features) x = g(rng);
  for (std::int64_t v = 0; v < kNodes; ++v) s.labels.push_back(v % kClasses);
  s.train_mask.assign(kNodes, 0);
  s.val_mask.assign(kNodes, 0);
  s.test_mask.assign(kNodes, 1);
  s.halo.resize(1);
  return s;
}

model::Gnn gcn() {
  model::ModelConfig c;
  c.layers = 2;
  c.hidden = kWidth;
  c.in_features = kWidth;
  c.num_classes = kClasses;
  return model::Gnn(c, 3);
}

std::uint64_t mapped_bytes() {
  unsigned long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%lu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Runs `work` in a child under RLIMIT_AS = mapped + kBudget; returns the child's exit code
// (0: finished, 3: an allocation failed, 4: setrlimit failed).
int run_capped(const std::function<void(const partition::Shard&)>& work) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      at::set_num_threads(1);
      const partition::Shard s = random_shard();
      const rlimit lim{mapped_bytes() + kBudget, mapped_bytes() + kBudget};
      if (::setrlimit(RLIMIT_AS, &lim) != 0) ::_exit(4);
      work(s);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(InferenceMemory, TheSpmmEvaluatorFitsACapThatTheEdgeListForwardExceeds) {
  // The new path: the evaluator (CSR SpMM, width 256) under the cap.
  const int spmm = run_capped([](const partition::Shard& s) {
    dist::LocalGroup group(1);
    group.run([&](dist::Communicator& comm) {
      const auto comms = dist::Collectives::over(comm);
      Evaluator ev(s, comms, c10::kCPU);
      const EvalResult r = ev.evaluate(gcn());
      if (r.test_nodes != kNodes) ::_exit(5);
    });
  });
  EXPECT_EQ(spmm, 0) << "full-neighbourhood evaluation of 3M CSR entries at width 256 needed more than 1.5 GB";
  // The control: one message per CSR entry (the pre-SpMM inference) under the same cap.
  const int edge_list = run_capped([](const partition::Shard& s) {
    std::vector<std::int64_t> dst, src;
    for (std::int64_t i = 0; i < kNodes; ++i)
      for (graph::NodeId u : s.rows.out_neigh(i)) {
        dst.push_back(i);
        src.push_back(u);
      }
    // The gather/scatter form that batches and inference used before the SpMM (one message
    // row per entry), written out here since no production code path builds it any more.
    const at::Tensor x = torch::from_blob(const_cast<float*>(s.features.data()), {kNodes, kWidth}, torch::kFloat32);
    const at::Tensor d = torch::tensor(dst, torch::kInt64), sr = torch::tensor(src, torch::kInt64);
    const at::Tensor msgs = x.index_select(0, sr);  // [entries, width]
    at::zeros({kNodes, kWidth}, x.options()).index_add_(0, d, msgs);
  });
  EXPECT_EQ(edge_list, 3) << "the cap no longer catches O(entries x width) memory: lower kBudget or grow the graph";
}

}  // namespace
}  // namespace dpgnn::train
