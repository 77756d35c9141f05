// Runtime checks of a sampler's output against the invariants the privacy analysis needs
// (gapbs-style verifier, STYLE.md "every algorithm ships with a verifier").
//
// Ayle et al. 2022 (Section 4.1, Appendix A) get sensitivity 2C only because subgraphs are
// disjoint: a node in two subgraphs would silently double the sensitivity. Daigavane et
// al. (Lemma 1, Theorem 1) need every node in at most N(K, r) subgraphs. DESIGN.md 4 makes
// these invariants that are checked at every (re)sampling, so the checks are linear in the
// size of the set: O(n + total nodes + total edges * log(degree)).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dpgnn/graph/csr_graph.h"
#include "dpgnn/sampling/sampler.h"
#include "dpgnn/sampling/subgraph_set.h"

namespace dpgnn::sampling {

struct SubgraphChecks {
  bool disjoint = true;                  // every node in at most one subgraph
  std::int64_t max_occurrence = -1;      // >= 0: every node in at most this many subgraphs
  std::int64_t max_size = -1;            // >= 0: every subgraph has at most this many nodes
  bool every_candidate_covered = false;  // every root-mask node is in some subgraph
  bool every_candidate_is_root = false;  // every root-mask node is the root of exactly one
  bool check_edges = true;               // every edge joins two nodes of its subgraph and is in g
};

// The checks that apply to a sampler's output: disjointness, size bound and coverage for
// drw/drw-r/node/split; one subgraph per root and the occurrence bound N(K, r) for dpgnn.
SubgraphChecks checks_for(const SamplerOptions& options);

struct VerifyReport {
  std::int64_t violations = 0;
  std::vector<std::string> messages;  // the first few violations, one sentence each
  std::int64_t max_occurrence = 0;    // the largest number of subgraphs one node is in
  std::int64_t max_size = 0;          // the largest subgraph
  bool ok() const { return violations == 0; }
};

// Checks `set` against `g` and `root_mask`. Always checked: the pointer arrays are
// well formed, roots are root-mask nodes and first in their subgraph, node ids are in
// range, no node repeats within a subgraph, no edge repeats or is a self-loop.
VerifyReport check_subgraphs(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                             const SubgraphSet& set, const SubgraphChecks& checks);

// The same, throwing dpgnn::Error (exit code 1: an internal error, a sampler bug) with the
// first violations when a check fails. `what` names the sampler in the message.
void verify_subgraphs(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                      const SubgraphSet& set, const SubgraphChecks& checks, const std::string& what);

}  // namespace dpgnn::sampling
