// The privacy accountant of a training run: the history of private steps and the epsilon
// it has spent (DESIGN.md decision 8: one accountant, at rank 0, rebuilt from the ledger
// on resume).
//
// The history is a list of (mechanism, count) events; step() appends, merging with the
// last event when the mechanism is identical, so the history — and hence every epsilon
// computed from it — does not depend on how the steps were batched: 100k calls of
// step(m) and one call of step(m, 100000) give the same history, the same text, and the
// same epsilon bit for bit. Heterogeneous steps (DRW-D re-sampling changes the number of
// subgraphs M, a budget split between mechanisms) compose by adding RDP per order
// (Mironov 2017, Proposition 1).
//
// Per-step RDP is cached per distinct mechanism, so epsilon() after every one of 100k
// steps costs O(#distinct runs x #orders), not a recomputation of the bounds.
//
// Two kinds (chosen at construction): kRdp, the above; kPld, privacy loss distributions
// (pld_accountant.h) when every event of the history has a proven dominating pair
// (gaussian, wor, poisson), reporting min(PLD, RDP) as both are valid upper bounds, and RDP
// alone for a history with any other scheme (dpgnn, groupwor, exponential, laplace). A PLD
// epsilon costs a composition (up to ~1 s for 10^5 steps), so would_exceed() answers from a
// cached step budget: the largest count of the last mechanism that fits the target, found
// once per (earlier history, mechanism, target, delta) by an exponential search and
// bisection over counts (epsilon is non-decreasing in the count).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dpgnn/privacy/conversion.h"
#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/privacy/subsample.h"

namespace dpgnn::privacy {

// "pld" (tight where a dominating pair is proven, RDP elsewhere) or "rdp".
enum class AccountantKind { kPld, kRdp };
std::string accountant_name(AccountantKind kind);
AccountantKind parse_accountant(const std::string& name);  // throws std::invalid_argument

struct AccountantEvent {
  Mechanism mechanism;
  std::int64_t count = 0;  // >= 1
  bool operator==(const AccountantEvent& o) const {
    return mechanism == o.mechanism && count == o.count;
  }
};

class Accountant {
 public:
  // `orders` empty = default_orders(). This constructor is the RDP accountant (kRdp), as
  // before kinds existed; the other one chooses the kind.
  explicit Accountant(std::vector<double> orders = {}, Conversion conversion = Conversion::kBalle);
  explicit Accountant(AccountantKind kind, std::vector<double> orders = {},
                      Conversion conversion = Conversion::kBalle);
  AccountantKind kind() const { return kind_; }

  // Records `count` (>= 1) steps of `mechanism`.
  void step(const Mechanism& mechanism, std::int64_t count = 1);

  // The whole run is applied to a hidden uniform sample (subsample.h): every epsilon below is
  // then the amplified one. Set once, before or after steps; throws std::invalid_argument
  // when a different subsample is already set.
  void set_subsample(const Subsample& subsample);
  const std::optional<Subsample>& subsample() const { return subsample_; }

  // Epsilon spent so far at `delta` (0 with no steps), and the minimising order (kPld: the
  // PLD value when it is the smaller one, with .pld set).
  EpsilonAtOrder epsilon(double delta) const;
  // A cheap upper bound on epsilon(delta), for a value logged every step (the ledger line):
  // kRdp: epsilon() itself. kPld: min(RDP, PLD of the history with its last event's count
  // rounded up to the grid {j * 2^max(0, bits(count) - 6)}, i.e. at most ~3% more steps) —
  // valid because epsilon is non-decreasing in the count; one composition per grid point
  // (cached), so ~32 compositions per doubling of the step count instead of one per step.
  // Deterministic: a resume replaying the same history logs the same values.
  EpsilonAtOrder epsilon_bound(double delta) const;

  // Delta spent so far at `epsilon`.
  DeltaAtOrder delta(double epsilon) const;

  // True if recording `count` more steps of `next` would make epsilon(delta) exceed
  // target_epsilon. Computed from exactly the history step() would produce, so
  // !would_exceed(e, d, m) implies epsilon(d) <= e after step(m).
  bool would_exceed(double target_epsilon, double delta, const Mechanism& next,
                    std::int64_t count = 1) const;

  // True when epsilon() uses a privacy loss distribution for this history.
  bool uses_pld() const;

  // Total RDP per order over the whole history.
  std::vector<double> total_rdp() const;

  const std::vector<AccountantEvent>& history() const { return history_; }
  const std::vector<double>& orders() const { return orders_; }
  Conversion conversion() const { return conversion_; }
  std::int64_t total_steps() const;

  // Plain-text serialisation, one event per line: "<count> <mechanism text>", e.g.
  // "100 wor n=1000 m=10 z=1", after a first line "subsample n=.. m=.." when one is set.
  // Orders and conversion are not part of it (they are configuration). restore() replaces
  // the history; it throws std::invalid_argument for a malformed line (naming its number)
  // and leaves the accountant unchanged then.
  std::string serialise() const;
  void restore(const std::string& text);
  static std::string event_line(const Mechanism& mechanism, std::int64_t count);
  static AccountantEvent parse_event_line(const std::string& line);

 private:
  const std::vector<double>& cached_rdp(const Mechanism& mechanism) const;
  std::vector<double> total_rdp_of(const std::vector<AccountantEvent>& history) const;
  EpsilonAtOrder epsilon_of(const std::vector<AccountantEvent>& history, double delta) const;
  std::int64_t pld_step_budget(const std::vector<AccountantEvent>& prefix, const Mechanism& mechanism,
                               std::int64_t at_least, double target_epsilon, double delta) const;
  static void append(std::vector<AccountantEvent>& history, const Mechanism& mechanism,
                     std::int64_t count);

  AccountantKind kind_ = AccountantKind::kRdp;
  std::vector<double> orders_;
  Conversion conversion_;
  std::vector<AccountantEvent> history_;
  std::optional<Subsample> subsample_;
  mutable std::map<Mechanism, std::vector<double>> rdp_cache_;
  // PLD epsilon per (history text, delta) and step budgets per (prefix, mechanism, target,
  // delta) text; both cleared when they grow past a few hundred entries.
  mutable std::map<std::string, double> pld_epsilon_cache_;
  mutable std::map<std::string, std::int64_t> budget_cache_;
};

}  // namespace dpgnn::privacy
