// Approximate personalized PageRank (APPR) by ISTA on the l1-regularised PageRank problem:
// the first building block of DPAR's DP-APPR (Zhang et al., "DPAR: Decoupled Graph Neural
// Networks with Node-Level Differential Privacy", Sec. 3.1 and Algorithm 1 line 4, which use
// "the ISTA algorithm (Algorithm 3 in [15])", [15] = Fountoulakis, Roosta-Khorasani, Shun,
// Cheng & Mahoney, "Variational perspective on local graph clustering", Math. Programming
// 174 (2019) 553-573).
//
// The problem (Fountoulakis et al. 2019, Sec. 3, the l1-regularised PageRank problem; the
// same objective, update and stopping rule as the authors' LocalGraphClustering package,
// localgraphclustering/ista_dinput_dense.py, github.com/kfoynt/LocalGraphClustering):
//
//   minimise  f(q) + g(q),   f(q) = 1/2 q^T Q q - alpha s^T D^{-1/2} q,
//                            g(q) = rho alpha ||D^{1/2} q||_1,
//   Q = D^{-1/2} (D - (1-alpha)/2 (D + A)) D^{-1/2} = (1+alpha)/2 I - (1-alpha)/2 D^{-1/2} A D^{-1/2},
//
// with A the adjacency matrix of an undirected graph, D its degree matrix and s = e_source.
// For rho = 0 the minimiser is q* = alpha Q^{-1} D^{-1/2} s and p = D^{1/2} q* solves
// p = alpha s + (1-alpha) W p with W = (I + A D^{-1}) / 2: the personalized PageRank vector
// of the LAZY random walk with teleportation alpha (Andersen, Chung & Lang, FOCS 2006, the
// "pr(alpha, s)" of APPR; Fountoulakis et al. 2019, Sec. 2). rho > 0 makes the minimiser
// sparse (Fountoulakis et al. 2019 bound the volume of the optimal support by 1/rho).
//
// ISTA (Fountoulakis et al. 2019, Algorithm 3): q_0 = 0, and with step size 1 (the largest
// eigenvalue of Q is <= 1 because the normalised Laplacian's are <= 2),
//   q_{k+1} = prox_g(q_k - grad f(q_k)),  prox_g(z)_i = sign(z_i) max(|z_i| - rho alpha sqrt(d_i), 0),
// until || D^{-1/2} grad f(q_k) ||_inf <= (1 + epsilon) rho alpha (their termination criterion;
// epsilon is DPAR's gamma). Started at 0 the iterates stay non-negative and grow
// monotonically (ibid., their analysis of Algorithm 3), so only nodes of the current support
// and their neighbours ever change: the rows read are those of the support and of its
// neighbours (for their degrees), nothing else.
#pragma once

#include <cstdint>
#include <vector>

namespace dpgnn::sampling {

struct ApprOptions {
  double alpha = 0.25;   // teleportation probability, in (0, 1) (DPAR Sec. 4: 0.25)
  double rho = 1e-4;     // l1 weight, >= 0 (DPAR Sec. 4: 1e-4)
  double epsilon = 1e-4; // stopping tolerance, >= 0: DPAR's gamma (Sec. 4: 1e-4)
  std::int64_t max_iterations = 10000;  // >= 1; the last iterate is returned when reached
};

// The graph seen by appr_ista: an undirected graph without self loops, read one row at a
// time. degree(node) = neighbours(node).size(). The returned reference need only stay valid
// until the next call (appr_ista copies what it keeps).
class NeighbourSource {
 public:
  virtual ~NeighbourSource() = default;
  virtual const std::vector<std::int64_t>& neighbours(std::int64_t node) = 0;
};

// A sparse vector: `index` strictly increasing, `value[i]` the entry at `index[i]`.
// appr_ista's results have every value > 0.
struct SparseVector {
  std::vector<std::int64_t> index;
  std::vector<double> value;
};

// What one appr_ista call did (optional output).
struct ApprInfo {
  std::int64_t iterations = 0;  // ISTA iterations performed
  bool converged = false;       // the termination criterion held (false: max_iterations hit)
  std::int64_t rows_read = 0;   // distinct nodes whose neighbour list was requested
};

// The APPR vector p = D^{1/2} q of `source`, q the ISTA iterate at termination (see above):
// the importance scores DPAR's DP top-K mechanisms select from. Non-negative, sorted by node
// id, zero entries omitted. Memory and time scale with the support and its neighbourhood,
// never with the graph (node ids may be as large as 2^40; hash maps only).
//
// Special cases (documented choices):
//  - rho * degree(source) >= 1 (with epsilon = 0; in general when the scaled gradient at
//    q = 0, alpha / d_source, is already <= (1 + epsilon) rho alpha): q = 0 satisfies the
//    termination criterion, so ISTA returns the EMPTY vector, exactly as Algorithm 3 does.
//    With DPAR's rho = 1e-4 this happens for sources of degree >= ~10^4.
//  - degree(source) = 0: the objective is undefined (D^{-1/2} s has a 1/0); we return the
//    limit of the PageRank definition for a walk that cannot leave the source,
//    p = e_source = {source: 1} (DPAR's "one-hot APPR vector", their Sec. 4 ablation).
// Throws std::invalid_argument naming the option when alpha is not in (0, 1), rho < 0,
// epsilon < 0, max_iterations < 1 (or any of them is NaN).
SparseVector appr_ista(NeighbourSource& graph, std::int64_t source, const ApprOptions& o,
                       ApprInfo* info = nullptr);

}  // namespace dpgnn::sampling
