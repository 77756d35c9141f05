#include "subgraph_epochs.h"

#include <algorithm>
#include <chrono>

#include "dpgnn/dist/communicator.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/sampling/sampler.h"
#include "dpgnn/sampling/verify.h"
#include "dpgnn/util/error.h"
#include "methods/method.h"

namespace dpgnn::train {
namespace {

// The subgraphs of `set` whose root (the part's local id) `drop` does not refuse, re-packed.
sampling::SubgraphSet without_roots(const sampling::SubgraphSet& set, const std::function<bool(std::int64_t)>& drop) {
  sampling::SubgraphSet out;
  out.loss_on_all_nodes = set.loss_on_all_nodes;
  for (std::int64_t i = 0; i < set.size(); ++i) {
    if (drop(set.roots[i])) continue;
    out.roots.push_back(set.roots[i]);
    out.nodes.insert(out.nodes.end(), set.nodes.begin() + set.node_ptr[i], set.nodes.begin() + set.node_ptr[i + 1]);
    out.node_ptr.push_back(static_cast<std::int64_t>(out.nodes.size()));
    out.edges.insert(out.edges.end(), set.edges.begin() + set.edge_ptr[i], set.edges.begin() + set.edge_ptr[i + 1]);
    out.edge_ptr.push_back(static_cast<std::int64_t>(out.edges.size()));
  }
  return out;
}

void ensure(bool ok, const dist::Communicator& comm, const std::string& message) {
  if (!ok) throw CollectiveError(message, kExitUsage, comm.rank() == 0);
}

}  // namespace

Sampled sample_all(const Config& cfg, const partition::Shard& shard, dist::Communicator& comm, std::uint64_t epoch,
                   const std::vector<std::int64_t>& part_train_nodes, const std::vector<std::int64_t>& removed,
                   const std::function<bool(std::int64_t)>& in_sample) {
  Sampled s;
  std::vector<std::int64_t> my_counts;
  for (const auto& pg : shard.training_graphs) {
    const auto opts = methods::method_spec(cfg.method_enum()).part_sampler_options(cfg, pg.part, part_train_nodes);
    const auto checks = sampling::checks_for(opts);
    PartSamples ps;
    ps.part = pg.part;
    ps.row_offset = pg.begin - shard.begin;
    const std::vector<std::uint8_t> mask(shard.train_mask.begin() + ps.row_offset,
                                         shard.train_mask.begin() + ps.row_offset + (pg.end - pg.begin));
    const sampling::SamplerKey key{cfg.train.seed, static_cast<std::uint64_t>(pg.part), epoch};
    ps.set = sampling::run_sampler(pg.graph, mask, opts, key);
    sampling::verify_subgraphs(pg.graph, mask, ps.set, checks,
                               std::string(sampling::to_string(opts.kind)) + " on part " + std::to_string(pg.part));
    if (!removed.empty() || in_sample) {
      // Training node index of each local row (only with a sample): the earlier parts'
      // training nodes, then the training rows before it in this part.
      std::vector<std::int64_t> index_of;
      if (in_sample) {
        std::int64_t first = 0;
        for (int p = 0; p < pg.part; ++p) first += part_train_nodes[static_cast<std::size_t>(p)];
        index_of.assign(mask.size(), -1);
        for (std::size_t v = 0; v < mask.size(); ++v)
          if (mask[v]) index_of[v] = first++;
      }
      ps.set = without_roots(ps.set, [&](std::int64_t v) {
        if (std::binary_search(removed.begin(), removed.end(), pg.begin + v)) return true;
        return in_sample && !in_sample(index_of[static_cast<std::size_t>(v)]);
      });
    }
    my_counts.push_back(ps.set.size());
    s.parts.push_back(std::move(ps));
  }
  // All parts' counts in part order (each rank owns a contiguous block of parts).
  std::vector<std::size_t> per_rank(comm.size());
  for (int q = 0; q < comm.size(); ++q) {
    const auto [a, b] = partition::parts_for_rank(q, comm.size(), shard.num_parts);
    per_rank[q] = static_cast<std::size_t>(b - a);
  }
  std::vector<std::int64_t> all_counts(static_cast<std::size_t>(shard.num_parts));
  comm.allgatherv(my_counts.data(), my_counts.size(), all_counts.data(), per_rank);
  s.ids = sampling::GlobalIds(all_counts);
  for (auto& ps : s.parts) ps.first_gid = s.ids.offset(ps.part);
  return s;
}

SubgraphEpochs::SubgraphEpochs(const Config& cfg, const methods::MethodSpec& spec, const partition::Shard& shard,
                               const partition::PartitionFile& pf, dist::Communicator& comm)
    : cfg_(cfg), spec_(spec), shard_(shard), pf_(pf), comm_(comm) {
  for (auto c : pf.part_train_nodes()) total_train_ += c;
  const auto start = std::chrono::steady_clock::now();
  resample();
  sample_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ensure(M() >= 1, comm_, pf_.path() + ": the sampler produced no subgraph (no training node?)");
  // Automatic batch: sized by the population the accountant uses (M_min with worst_case).
  m_ = cfg.train.batch_size > 0 ? cfg.train.batch_size : spec.auto_batch_size(population());
  full_auto_batch_ = cfg.train.batch_size == 0 && m_ == population();
  ensure(m_ <= M(), comm_,
         cfg.source + ": key 'train.batch_size': " + std::to_string(m_) + " is larger than the number of subgraphs M = " +
             std::to_string(M()) + " (uniform sampling without replacement needs m <= M)");
}

std::int64_t SubgraphEpochs::population() const { return spec_.population(cfg_, M(), total_train_); }

void SubgraphEpochs::resample() {
  sampled_ = sample_all(cfg_, shard_, comm_, epoch_, pf_.part_train_nodes(), removed_, in_sample_);
}

void SubgraphEpochs::restrict_to(const methods::PreRelease& release) {
  if (release.removed_examples.empty() && !release.in_sample) return;
  removed_ = release.removed_examples;
  in_sample_ = release.in_sample;
  resample();
  if (cfg_.train.batch_size == 0) m_ = spec_.auto_batch_size(population());
  full_auto_batch_ = cfg_.train.batch_size == 0 && m_ == population();
  ensure(m_ <= M(), comm_,
         cfg_.source + ": key 'train.batch_size' (" + std::to_string(m_) + ") exceeds the " + std::to_string(M()) +
             " examples left after the release");
}

bool SubgraphEpochs::advance_to(std::int64_t step) {
  const std::uint64_t e = spec_.epoch_of_step(cfg_, step);
  if (e == epoch_) return false;
  epoch_ = e;
  resample();
  // An automatic full batch follows the epoch's M (each step is then the plain Gaussian
  // mechanism whatever M is, so the calibration still holds); any other batch stays as it is.
  if (full_auto_batch_) m_ = population();
  ensure(m_ <= M(), comm_,
         "drw-d re-sampling (epoch " + std::to_string(epoch_) + ") produced M = " + std::to_string(M()) +
             " subgraphs, fewer than train.batch_size = " + std::to_string(m_));
  return true;
}

}  // namespace dpgnn::train
