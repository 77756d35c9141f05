// `dpgnn audit`: an empirical lower bound on epsilon from ONE training run, with the method
// of Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run" (NeurIPS 2023);
// the bound itself is privacy/audit_bound.h. docs/audit.md is the user's page.
//
// Canaries (input-space Dirac canaries, added through the data):
//   the dataset gets D = N extra feature columns, zero for every real node, and N extra
//   isolated nodes (no edges, training nodes, not in val/test), so every canary is a training
//   root whose subgraph is itself, for every sampler. Canary i has the feature vector
//   scale * e_{F+i}; a secret fair coin per canary (the OS's secure randomness) gives it the
//   label i mod C ("included") or (i + 1) mod C ("excluded"). Flipping a coin changes ONE
//   node's label and nothing else: a replace-one neighbour for the feature-and-label privacy
//   unit of the accountants (DESIGN.md 3; node-level DP covers it too), and M (the number of
//   subgraphs the accountant uses) is the same whatever the coins are. The two labels push
//   the canary's own column in nearly opposite directions (a larger difference than
//   "present" vs "absent"), and since only canary i is non-zero in column F+i, only its
//   gradient (and the noise) moves column F+i of the first layer's weights.
// Training: the ordinary run_training on the augmented dataset (same sampler, clipping,
//   noise, all-reduce, accountant); the claimed epsilon is that run's accountant's. Adam is
//   replaced by plain SGD (same lr): Adam's per-coordinate scaling lets the noise drag the
//   canaries' activations far from the initial model, which halves the attack's signal.
// Threat model: white-box, final model. The auditor knows the design, the public train.seed
//   (hence the initial weights), and the final parameters (model.h5); not the coins, not
//   the batches, not the noise. Score of canary i: the displacement of its columns from
//   their initial values projected on the direction that favours the "included" label over
//   the "excluded" one (audit.cpp, canary_scores).
// Guesses: fixed before training (audit_guess_candidates): "included" for the k highest
//   scores, "excluded" for the k lowest, abstain on the rest; with several candidates each
//   would be evaluated at beta / (number of candidates) (union bound).

#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "dpgnn/train/config.h"
#include "dpgnn/train/trainer.h"

namespace dpgnn::dist {
class Collectives;
}

namespace dpgnn::train {

struct AuditOptions {
  std::string out_dir;          // must be new or empty; holds run/, audit.json, canaries.csv (and data/)
  // Keep data/ (the dataset with canaries and its partition, scratch otherwise removed once
  // the canaries are scored: it is the size of the dataset).
  bool keep_data = false;
  std::int64_t canaries = 4000;  // N
  double confidence = 0.95;      // 1 - beta
  double canary_scale = 10.0;    // the non-zero feature of an included canary
  bool progress = true;
  int local_ranks = 1;
};

struct AuditResult {
  TrainSummary run;                 // the training run with its canaries
  bool is_private = false;  // run_is_private(config): the run is covered by the guarantee
  bool accounted = false;   // the method accounts an epsilon (the claim the lower bound is checked against)
  double epsilon = 0.0;             // claimed: the run's accountant (0 for a non-private method)
  double delta = 0.0;
  double epsilon_lower_bound = 0.0;
  double confidence = 0.0;
  std::int64_t canaries = 0;
  std::int64_t included = 0;        // coins that came up "in"
  std::int64_t guesses = 0;         // r of the best candidate
  std::int64_t positive_guesses = 0;
  std::int64_t correct = 0;         // v of the best candidate
  std::int64_t candidates = 0;      // guess counts tried (union bound over them)
  std::string optimizer;            // of the audited run: sgd when the config says adam
};

// Builds the canary dataset (and partition, when the config has one) at rank 0, trains on it
// with run_training over `comms`, scores the canaries from the final model at rank 0 and
// returns the bound (the same result on every rank). Collective. Throws dpgnn::Error.
AuditResult run_audit(const Config& config, const AuditOptions& options, const dist::Collectives& comms);

// The result as one JSON object (audit.json, `dpgnn audit --json`): epsilon (null for a
// non-private method), epsilon_lower_bound, confidence, canaries, guesses, correct_guesses...
nlohmann::json audit_json(const AuditResult& result);

// The guess counts the audit uses for N canaries, fixed in advance: k = max(1, N/20) guessed
// "included" (highest scores) and k "excluded" (lowest). A list so that a union bound over
// several candidates stays possible (each is evaluated at beta / size). Public for the tests.
struct GuessCandidate {
  std::int64_t positive = 0;  // highest scores guessed "included"
  std::int64_t negative = 0;  // lowest scores guessed "excluded"
};
std::vector<GuessCandidate> audit_guess_candidates(std::int64_t canaries);

}  // namespace dpgnn::train
