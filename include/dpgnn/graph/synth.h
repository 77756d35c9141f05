// Synthetic datasets: a degree-corrected stochastic block model (DC-SBM) with
// class-correlated Gaussian features, the data behind `dpgnn synth` (docs/synth.md).
//
// Model (Karrer & Newman, "Stochastic blockmodels and community structure in networks",
// Phys. Rev. E 83, 016107, 2011, with the planted-partition block matrix):
//   - node classes: (nearly) balanced sizes (differ by at most one), assigned at random;
//   - degree propensities theta_v ~ Pareto(x_min = 1, exponent gamma), pdf ~ x^-gamma,
//     capped so that no node's expected degree exceeds `max_degree`;
//   - round(H * N * D / 2) distinct same-class edges and the rest of the N * D / 2 distinct
//     cross-class edges. A same-class edge draws u ~ theta over all nodes and v ~ theta
//     within class(u); a cross-class edge draws u, v ~ theta over all nodes, redrawn until
//     their classes differ. So P({u, v}) ~ theta_u theta_v inside each block, and the
//     expected degree of v is proportional to theta_v (Karrer & Newman, eq. 4).
//   - self-loops and repeated pairs are rejected and more edges of the kind drawn until
//     both targets are met (in rounds; together they equal drawing one edge at a time and
//     rejecting repeats), so the realised average degree and homophily equal the requested
//     ones unless the blocks are too dense to hold them (then the realised values, always
//     logged and stored in the `source` attribute, are lower);
//   - features x_v = mu_{class(v)} + N(0, I_F) (float32), mu_c a random direction of norm
//     `feature_signal`.
// Every random choice is keyed by (seed, node), (seed, class) or (seed, round, block)
// with the counter-based Philox generator (util/rng.h), so the output depends on the
// parameters and the seed only, never on the number of threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dpgnn/graph/csr_graph.h"

namespace dpgnn::graph {

struct SynthParams {
  std::int64_t nodes = 0;            // N >= 1
  double avg_degree = 0;             // D in [0, N - 1]: N * D / 2 undirected edges
  std::int64_t classes = 1;          // C in [1, N]
  std::int64_t features = 0;         // F >= 0 (0 = no feature matrix)
  double homophily = 0.5;            // H in [0, 1]: fraction of edges inside a class
  std::uint64_t seed = 0;
  bool inductive = false;            // stored as setting = inductive
  double train_frac = 0.5;           // train = round(train_frac * N) nodes, >= 1
  double val_frac = 0.25;            // val = round(val_frac * N); test = the rest
  double degree_exponent = 2.5;      // gamma > 1 of the Pareto propensities
  double max_degree = 0;             // cap on a node's expected degree; 0 = automatic
  double feature_signal = 1.0;       // ||mu_c||, against unit noise per dimension
  std::string name = "synth";
  int threads = 1;                   // worker threads; never changes the output
};

// Throws UsageError naming the option (as spelled on the command line, e.g. "--nodes")
// and the problem when a parameter is out of range or the targets cannot be met.
void validate_synth_params(const SynthParams& p);

// The automatic cap on a node's expected degree: min(sqrt(N * D), what a node's
// same-class and cross-class shares can hold without saturating its blocks), at least D.
double default_max_degree(const SynthParams& p);

// The graph part of a synthetic dataset (everything but the features).
struct SynthStructure {
  CsrGraph graph;                    // symmetric, sorted rows, no self-loops or repeats
  std::vector<std::int64_t> labels;  // [N]
  std::vector<std::uint8_t> train_mask, val_mask, test_mask;  // [N]
  std::int64_t target_edges = 0;     // requested undirected edges, round(N * D / 2)
  std::int64_t same_class_edges = 0;   // realised
  std::int64_t cross_class_edges = 0;  // realised
  double max_expected_degree = 0;    // the cap in force
  int rounds = 0;                    // draw rounds used (1 = no repeat had to be replaced)
};

// Draws classes, splits and edges. Memory: ~8 bytes per undirected edge twice (sorted
// edge keys and their merge buffer) plus the CSR (4 bytes per entry).
SynthStructure generate_synth_structure(const SynthParams& p);

// The class means mu_c, [C, F] row-major, each of norm feature_signal.
std::vector<double> synth_class_means(const SynthParams& p);

// Feature rows [row_begin, row_end) into out ([rows, F] row-major), from each node's own
// random stream: any row range can be produced on its own, in any order.
void synth_feature_rows(const SynthParams& p, const std::vector<double>& class_means,
                        const std::vector<std::int64_t>& labels, std::int64_t row_begin,
                        std::int64_t row_end, float* out);

struct SynthReport {
  std::string checksum;              // content checksum stored in the file
  std::string source;                // the `source` attribute (all parameters, realised values)
  std::int64_t nodes = 0;
  std::int64_t csr_entries = 0;
  std::int64_t undirected_edges = 0;
  std::int64_t target_edges = 0;
  std::int64_t max_degree = 0;
  std::int64_t isolated = 0;
  double realised_avg_degree = 0;    // csr_entries / N
  double realised_homophily = 0;     // same-class edges / edges
  double max_expected_degree = 0;
  int rounds = 0;
};

// Generates the dataset and streams it to `path` with DatasetWriter (indptr, indices,
// feature rows block by block, labels, masks): the feature matrix is never held whole.
// Overwrites `path` (the CLI refuses an existing file unless --force).
SynthReport write_synthetic_dataset(const SynthParams& p, const std::string& path);

}  // namespace dpgnn::graph
