// `dpgnn partition`: splits a dataset into P parts once, before training (DESIGN.md 5-6).
//
//   [mpiexec -n W] dpgnn partition --dataset FILE.h5 --parts P [--method metis|random] [--seed S]
//                   [--imbalance 0.05] [--force] --out PART.h5
//
// With W >= 2 ranks the structure-aware method runs as PT-Scotch across the ranks, each
// reading only its block (partition/distributed_partition.h); one process uses METIS.
// METIS k-way on the structure with balanced training nodes and edges (feature-level DP:
// the structure is public), or a seeded random assignment that never looks at the
// structure (node-level DP). The output is a relabelled dataset file plus a /partition group
// (partition/partition_writer.h, docs/partitioning.md); it prints the parts, the edge cut,
// the balance per constraint and the time taken.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>

#include "command.h"
#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/environment.h"
#include "dpgnn/partition/distributed_partition.h"
#include "dpgnn/partition/partition_writer.h"
#include "dpgnn/util/log.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/system.h"

namespace dpgnn::cli {

void add_partition_command(CLI::App& root, Registry& registry) {
  struct Options {
    std::string dataset, out, method = "metis";
    std::int64_t parts = 0;
    std::uint64_t seed = 0;
    double imbalance = 0.05;
    bool force = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "partition",
      "Partition a dataset into P parts (METIS k-way on the structure, or structure-independent random) and "
      "write it relabelled so that each part is a contiguous id range. Under `mpiexec -n W` (W >= 2) the "
      "structure-aware method runs as PT-Scotch across the ranks, each reading only its block");
  app->add_option("--dataset", opt->dataset, "Input dataset file (HDF5)")->required();
  app->add_option("--parts", opt->parts, "Number of parts P (1 <= P <= nodes); ranks own whole parts")->required();
  app->add_option("--method", opt->method,
                  "metis (structure-aware; feature-level DP; PT-Scotch under mpiexec -n W >= 2) or random (ignores "
                  "the structure; node-level DP; one process)")
      ->capture_default_str();
  app->add_option("--seed", opt->seed, "Seed (METIS_OPTION_SEED modulo 2^31, or the random assignment's key)")
      ->capture_default_str();
  app->add_option("--imbalance", opt->imbalance,
                  "Allowed imbalance per METIS constraint (training nodes, edges): max part / mean <= 1 + this")
      ->capture_default_str();
  app->add_flag("--force", opt->force, "Overwrite --out if it exists");
  app->add_option("--out", opt->out, "Output partition file (HDF5; also a valid dataset file)")->required();

  registry.add(app, [opt]() {
    partition::PartitionOptions po;
    try {
      po.method = partition::parse_method(opt->method);
      // The upper bound (the number of nodes) is checked against the dataset.
      if (opt->parts < 1 || opt->parts > std::numeric_limits<int>::max())
        throw UsageError("--parts " + std::to_string(opt->parts) + " must be >= 1 (and at most the number of nodes)");
    } catch (const Error& e) {
      // Every rank of an mpiexec job fails alike: one message, from rank 0.
      if (launcher_world_size() > 1) throw CollectiveError(e.what(), e.exit_code(), launcher_rank_is_zero());
      throw;
    }
    po.num_parts = static_cast<int>(opt->parts);
    po.seed = opt->seed;
    po.imbalance = opt->imbalance;
    po.overwrite = opt->force;
    const auto t0 = std::chrono::steady_clock::now();
    // Under mpiexec with several ranks: PT-Scotch across the ranks (DESIGN.md 5); otherwise
    // METIS (or random) in this one process, without MPI.
    int ranks = 1, rank = 0;
    partition::PartitionReport rep;
    if (launcher_world_size() > 1) {
      const auto& env = dist::init_environment(nullptr, nullptr);
      set_finalize_handler([] { dist::finalize_environment(); });
      ranks = env.world_size;
      rank = env.world_rank;
    }
    if (ranks > 1) {
      const auto comms = dist::Collectives::open(/*on_gpu=*/false);
      rep = partition::partition_dataset_distributed(opt->dataset, opt->out, po, comms);
    } else {
      rep = partition::partition_dataset(opt->dataset, opt->out, po);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (ranks > 1) dist::finalize_environment();
    if (rank != 0) return 0;  // rank 0 reports
    const auto& q = rep.quality;
    std::printf("partition %s: %d parts (%s, seed %llu%s) of %lld nodes, %lld CSR entries\n", opt->out.c_str(),
                po.num_parts, rep.method.c_str(), static_cast<unsigned long long>(po.seed),
                ranks > 1 ? (", " + std::to_string(ranks) + " ranks").c_str() : "",
                static_cast<long long>(rep.num_nodes), static_cast<long long>(rep.num_edges));
    std::printf("  edge cut        %lld of %lld undirected edges (%.2f%%)\n", static_cast<long long>(q.edge_cut),
                static_cast<long long>(q.undirected_edges), 100.0 * q.edge_cut_fraction());
    std::printf("  balance         training nodes %.4f, edges %.4f, nodes %.4f (max part / mean", q.balance_train_nodes,
                q.balance_edges, q.balance_nodes);
    if (ranks > 1)
      std::printf("; PT-Scotch balances one combined weight to <= %.4f)\n", 1.0 + po.imbalance);
    else if (po.method == partition::Method::metis)
      std::printf("; requested <= %.4f for training nodes and edges)\n", 1.0 + po.imbalance);
    else
      std::printf("; random parts balance node counts only)\n");
    std::printf("  %-6s %12s %14s %12s\n", "part", "nodes", "CSR entries", "train");
    for (int p = 0; p < po.num_parts; ++p)
      std::printf("  %-6d %12lld %14lld %12lld\n", p, static_cast<long long>(q.part_nodes[p]),
                  static_cast<long long>(q.part_edges[p]), static_cast<long long>(q.part_train_nodes[p]));
    std::printf("  dataset checksum %s, partition file checksum %s\n", rep.dataset_checksum.c_str(), rep.checksum.c_str());
    std::printf("  time            %.2f s (read %.2f s, assign %.2f s, write %.2f s), peak RSS %.1f MiB\n", seconds,
                rep.seconds_read, rep.seconds_assign, rep.seconds_write,
                static_cast<double>(peak_rss_bytes()) / (1024.0 * 1024.0));
    if (!rep.rank_peak_rss.empty()) {
      std::printf("  peak RSS/rank ");
      for (std::size_t r = 0; r < rep.rank_peak_rss.size(); ++r)
        std::printf("%s%.1f", r == 0 ? "" : ", ", static_cast<double>(rep.rank_peak_rss[r]) / (1024.0 * 1024.0));
      std::printf(" MiB (ranks 0..%zu)\n", rep.rank_peak_rss.size() - 1);
    }
    if (ranks == 1 && po.method == partition::Method::metis &&
        // METIS itself allows 1 + ufactor/1000 + 0.0000499 (libmetis SetupCtrl); warn beyond that.
        std::max(q.balance_train_nodes, q.balance_edges) > 1.0 + po.imbalance + 1e-4)
      spdlog::warn("partition: METIS did not meet the requested imbalance {} (balance: training nodes {:.5f}, "
                   "edges {:.5f}); the partition is valid but less balanced",
                   po.imbalance, q.balance_train_nodes, q.balance_edges);
    return 0;
  });
}

}  // namespace dpgnn::cli
