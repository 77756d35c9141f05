// Full-neighbourhood evaluation: layer-wise inference over the whole graph with halo
// exchange between shards, then accuracy (single-label) or micro-F1 (multi-label) on the
// validation and test nodes.
//
// Each rank computes layer l for its own nodes from layer l-1 of its nodes and of their
// remote neighbours (the halo), which it receives with one all-to-all-v per layer. The
// aggregation is a CSR SpMM over the rank's rows (model/spmm.h, Gnn::layer_forward_csr):
// memory is O((local + halo nodes) x width + CSR entries), never O(entries x width). The
// exchange plan (who needs which of my rows) is built once, collectively. The graph is the
// full graph in both settings: in the inductive setting training saw only the training
// nodes' graph, and evaluation runs on the full graph that holds the held-out nodes.
#pragma once

#include <cstdint>
#include <vector>

#include "dpgnn/model/gnn.h"
#include "dpgnn/partition/shard.h"

namespace dpgnn::dist {
class Collectives;
class Communicator;
}

namespace dpgnn::train {

struct EvalResult {
  double val = 0.0, test = 0.0;  // accuracy or micro-F1
  std::int64_t val_nodes = 0, test_nodes = 0;
};

class Evaluator {
 public:
  // Collective: exchanges the halo requests over `comms` (host buffers); halo rows later move
  // from `device` memory by the path `comms` takes for it. `comms` must outlive the evaluator.
  Evaluator(const partition::Shard& shard, const dist::Collectives& comms, c10::Device device);
  // Collective: logits [n_local, C] of the rank's nodes (full-neighbourhood inference).
  at::Tensor logits(const model::Gnn& model);
  // Collective: accuracy / micro-F1 on the val and test nodes.
  EvalResult evaluate(const model::Gnn& model);
  // Collective: metrics of given predictions ([n_local] or [n_local, C] int64, CPU).
  EvalResult metrics(const at::Tensor& predictions);
  // DPAR's inference (Zhang et al., Sec. 4 "Inference Phase", Eq. 4, after Bojchevski et al.
  // 2020): the model's outputs H, then `steps` power-iteration steps
  // Z <- (1 - alpha) D^{-1} A Z + alpha H over the evaluation graph, one halo exchange each.
  // 0 steps (the default) = the model's outputs as they are. `center`: first subtract from
  // every node's outputs their mean over all nodes of the graph (every rank's), which removes
  // a common offset per class (dpar.center_outputs; methods/method.h, Propagation).
  // `keep_shares` (two classes only): after the propagation, add to class 1's outputs the
  // offset that makes the mean predicted probability of every class over all nodes equal the
  // model's before the propagation (dpar.keep_class_shares; used without released labels).
  void set_propagation(int steps, double alpha, bool center = false, bool keep_shares = false);
  bool centers_outputs() const { return center_; }
  bool keeps_class_shares() const { return keep_shares_; }
  // Released training labels as evidence (DPAR's label release, methods/dpar_labels.h): a
  // node in `nodes` (dataset ids, sorted) with released label y gets the model's class
  // probabilities (softmax of its outputs at temperature 2: evaluator.cpp,
  // kModelPriorTemperature) times the likelihood of y under k-RR with keep probability q (q at y,
  // (1 - q) / (k - 1) elsewhere), renormalised (Bayes' rule); the power iteration then spreads
  // probabilities, not logits, and logits() returns their logarithm.
  // choose_steps: see below.
  void set_label_evidence(std::int64_t categories, double keep_probability, const std::vector<std::int64_t>& nodes,
                          const std::vector<std::int64_t>& labels, bool choose_steps);
  // With label evidence: choose the power-iteration steps among 1, 2, 4 and 8 on the
  // released labels: the evidence of half the labelled nodes
  // (those whose dataset id hashes odd) is propagated, and the steps whose predictions agree
  // most with the other half's released labels win (ties: the nearest to the configured
  // steps); then the full evidence is propagated with them. Randomized response is symmetric,
  // so agreement with released labels ranks the choices as agreement with the true ones would,
  // in expectation. Without evidence the configured steps are used. NOT post-processing: the
  // choice runs the model on the training nodes' own features and propagates over the graph,
  // neither noised, so the chosen steps are outside the guarantee (docs/privacy.md).
  // The steps the last logits() used (-1 before any).
  int last_steps() const { return last_steps_; }
  // Whether the last logits() chose its steps on the released labels.
  bool steps_were_chosen() const { return choose_steps_ && categories_ > 0; }

 private:
  at::Tensor exchange(const at::Tensor& h);  // [n_local, d] -> halo rows [n_halo, d]

  const partition::Shard& shard_;
  const dist::Collectives& comms_;
  dist::Communicator& comm_;  // comms_.host(): the plans and sums on host buffers
  c10::Device device_;
  model::CsrAdjacency adj_;                      // local rows, columns local + halo (CPU)
  at::Tensor degrees_;                           // [n_local + n_halo] full-graph degrees (device)
  at::Tensor x_;                                 // [n_local, F] on device (aliases the shard on CPU)
  at::Tensor send_rows_;                         // local rows to send, grouped by destination
  std::vector<std::size_t> send_counts_, recv_counts_;  // rows per peer
  std::int64_t n_halo_ = 0;
  int propagation_steps_ = 0;
  double propagation_alpha_ = 0.0;
  bool center_ = false;
  bool keep_shares_ = false;
  at::Tensor centered(const at::Tensor& h) const;  // collective: h minus its mean row over all nodes
  // Collective: z with class 1 offset so that the mean softmax over all nodes is `share1` for class 1.
  at::Tensor with_class_share(const at::Tensor& z, double share1) const;
  std::vector<double> column_means(const at::Tensor& h) const;  // collective: h's mean row over all nodes
  at::Tensor propagate(const at::Tensor& h, int steps, const std::vector<int>& record = {},
                       std::vector<at::Tensor>* recorded = nullptr);  // Z after `steps` (and at `record`)
  at::Tensor posterior(const at::Tensor& probabilities, const at::Tensor& rows, const at::Tensor& labels) const;
  int choose_steps(const at::Tensor& probabilities);

  at::Tensor evidence_rows_, evidence_labels_;  // local rows with a released label, and the label
  at::Tensor evidence_half_;                    // bool per evidence row: in the half that gives evidence
  bool choose_steps_ = false;
  int last_steps_ = -1;
  double keep_probability_ = 0.0;
  std::int64_t categories_ = 0;
};

}  // namespace dpgnn::train
