// The run's privacy accountant: history of (mechanism, count) events, cached per-step RDP,
// additive composition over orders (Mironov 2017, Proposition 1), exact text round trip.
// See accountant.h for why the history is merged and recomputed rather than accumulated.
#include "dpgnn/privacy/accountant.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/pld_accountant.h"
#include "dpgnn/privacy/rdp.h"

namespace dpgnn::privacy {

namespace {

std::string exact(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string history_text(const std::vector<AccountantEvent>& history) {
  std::string out;
  for (const AccountantEvent& e : history) out += Accountant::event_line(e.mechanism, e.count) + "\n";
  return out;
}

}  // namespace

std::string accountant_name(AccountantKind kind) { return kind == AccountantKind::kPld ? "pld" : "rdp"; }

AccountantKind parse_accountant(const std::string& name) {
  if (name == "pld") return AccountantKind::kPld;
  if (name == "rdp") return AccountantKind::kRdp;
  throw std::invalid_argument("accountant must be pld or rdp, got '" + name + "'");
}

Accountant::Accountant(std::vector<double> orders, Conversion conversion)
    : Accountant(AccountantKind::kRdp, std::move(orders), conversion) {}

Accountant::Accountant(AccountantKind kind, std::vector<double> orders, Conversion conversion)
    : kind_(kind), orders_(orders.empty() ? default_orders() : std::move(orders)), conversion_(conversion) {
  validate_orders(orders_);
}

void Accountant::append(std::vector<AccountantEvent>& history, const Mechanism& mechanism,
                        std::int64_t count) {
  if (count < 1)
    throw std::invalid_argument("accountant: step count must be >= 1, got " +
                                std::to_string(count));
  if (!history.empty() && history.back().mechanism == mechanism) {
    if (history.back().count > INT64_MAX - count)
      throw std::invalid_argument("accountant: step count overflows int64");
    history.back().count += count;
  } else {
    history.push_back({mechanism, count});
  }
}

const std::vector<double>& Accountant::cached_rdp(const Mechanism& mechanism) const {
  auto it = rdp_cache_.find(mechanism);
  if (it == rdp_cache_.end())
    it = rdp_cache_.emplace(mechanism, rdp_per_step(mechanism, orders_)).first;
  return it->second;
}

void Accountant::step(const Mechanism& mechanism, std::int64_t count) {
  cached_rdp(mechanism);  // validates the mechanism before it enters the history
  append(history_, mechanism, count);
}

std::vector<double> Accountant::total_rdp_of(const std::vector<AccountantEvent>& history) const {
  std::vector<double> total(orders_.size(), 0.0);
  for (const AccountantEvent& e : history) {
    const std::vector<double>& per_step = cached_rdp(e.mechanism);
    for (std::size_t i = 0; i < total.size(); ++i)
      total[i] += static_cast<double>(e.count) * per_step[i];
  }
  return total;
}

std::vector<double> Accountant::total_rdp() const { return total_rdp_of(history_); }

void Accountant::set_subsample(const Subsample& subsample) {
  Subsample::of(subsample.population, subsample.sample);  // validates
  if (subsample_ && !(*subsample_ == subsample))
    throw std::invalid_argument("accountant: the run's subsample is already " + subsample_->to_string() +
                                ", cannot set " + subsample.to_string());
  subsample_ = subsample;
}

bool Accountant::uses_pld() const { return kind_ == AccountantKind::kPld && has_pld(history_); }

// RDP always; with kPld and a history that has a PLD, the smaller of the two (both are upper
// bounds on the same epsilon).
EpsilonAtOrder Accountant::epsilon_of(const std::vector<AccountantEvent>& history, double delta) const {
  EpsilonAtOrder e = epsilon_of_run(orders_, total_rdp_of(history), delta, conversion_, subsample_);
  if (kind_ != AccountantKind::kPld || !has_pld(history)) return e;
  const std::string key = (subsample_ ? subsample_->to_string() + "\n" : std::string()) + history_text(history) +
                          exact(delta);
  auto it = pld_epsilon_cache_.find(key);
  if (it == pld_epsilon_cache_.end()) {
    const std::optional<double> p = pld_epsilon_of_run(history, delta, subsample_);
    if (pld_epsilon_cache_.size() > 256) pld_epsilon_cache_.clear();
    it = pld_epsilon_cache_.emplace(key, p ? *p : e.epsilon).first;
  }
  if (it->second < e.epsilon) e = {it->second, 0.0, true};
  return e;
}

EpsilonAtOrder Accountant::epsilon(double delta) const {
  validate_delta(delta);
  if (history_.empty()) return {0.0, orders_.front()};
  return epsilon_of(history_, delta);
}

EpsilonAtOrder Accountant::epsilon_bound(double delta) const {
  validate_delta(delta);
  if (history_.empty()) return {0.0, orders_.front()};
  if (!uses_pld()) return epsilon_of(history_, delta);
  std::vector<AccountantEvent> rounded = history_;
  std::int64_t& count = rounded.back().count;
  int bits = 0;
  for (std::int64_t c = count; c > 0; c >>= 1) ++bits;
  const std::int64_t grain = std::int64_t{1} << std::max(0, bits - 6);
  count = (count + grain - 1) / grain * grain;
  EpsilonAtOrder e = epsilon_of(rounded, delta);
  // The exact RDP value of the real history may be the smaller one.
  const EpsilonAtOrder r = epsilon_of_run(orders_, total_rdp(), delta, conversion_, subsample_);
  if (r.epsilon <= e.epsilon) e = r;
  return e;
}

DeltaAtOrder Accountant::delta(double epsilon) const {
  if (history_.empty()) return {0.0, orders_.front()};
  DeltaAtOrder d = delta_of_run(orders_, total_rdp(), epsilon, conversion_, subsample_);
  if (kind_ == AccountantKind::kPld) {
    const std::optional<double> p = pld_delta_of_run(history_, epsilon, subsample_);
    if (p && *p < d.delta) d = {*p, 0.0};
  }
  return d;
}

// The largest k >= 0 such that prefix + k x mechanism keeps epsilon <= target (0 if none):
// exponential search upwards from at_least (the count asked about), then bisection. It does
// not depend on at_least, so it is cached: the trainer asks every step with the same prefix
// and mechanism, and only a new mechanism (DRW-D's new M) or target starts a new search.
std::int64_t Accountant::pld_step_budget(const std::vector<AccountantEvent>& prefix, const Mechanism& mechanism,
                                         std::int64_t at_least, double target_epsilon, double delta) const {
  const std::string key = (subsample_ ? subsample_->to_string() + "\n" : std::string()) + history_text(prefix) +
                          mechanism.to_string() + " " + exact(target_epsilon) + " " + exact(delta);
  if (auto it = budget_cache_.find(key); it != budget_cache_.end()) return it->second;
  auto fits = [&](std::int64_t k) {
    std::vector<AccountantEvent> h = prefix;
    append(h, mechanism, k);
    return epsilon_of(h, delta).epsilon <= target_epsilon;
  };
  // good fits, bad does not.
  std::int64_t good = 0, bad = std::max<std::int64_t>(1, at_least);
  const std::int64_t limit = std::int64_t{1} << 53;
  while (fits(bad)) {
    good = bad;
    if (bad >= limit) break;
    bad = std::min(limit, bad * 2);
  }
  if (good < bad)
    while (bad - good > 1) {
      const std::int64_t mid = good + (bad - good) / 2;
      if (fits(mid)) good = mid; else bad = mid;
    }
  if (budget_cache_.size() > 256) budget_cache_.clear();
  budget_cache_[key] = good;
  return good;
}

bool Accountant::would_exceed(double target_epsilon, double delta, const Mechanism& next,
                              std::int64_t count) const {
  validate_delta(delta);
  if (std::isnan(target_epsilon) || target_epsilon < 0.0)
    throw std::invalid_argument("target epsilon must be >= 0, got " +
                                std::to_string(target_epsilon));
  cached_rdp(next);
  std::vector<AccountantEvent> hypothetical = history_;
  append(hypothetical, next, count);
  const EpsilonAtOrder e =
      epsilon_of_run(orders_, total_rdp_of(hypothetical), delta, conversion_, subsample_);
  // RDP fits (then so does min(PLD, RDP)), or RDP is all there is.
  if (e.epsilon <= target_epsilon || kind_ != AccountantKind::kPld || !has_pld(hypothetical))
    return e.epsilon > target_epsilon;
  // PLD: compare the last event's count with its cached budget (exactly the history step()
  // would produce: the same merge rule).
  const AccountantEvent last = hypothetical.back();
  hypothetical.pop_back();
  return last.count > pld_step_budget(hypothetical, last.mechanism, last.count, target_epsilon, delta);
}

std::int64_t Accountant::total_steps() const {
  std::int64_t n = 0;
  for (const AccountantEvent& e : history_) n += e.count;
  return n;
}

std::string Accountant::event_line(const Mechanism& mechanism, std::int64_t count) {
  return std::to_string(count) + " " + mechanism.to_string();
}

AccountantEvent Accountant::parse_event_line(const std::string& line) {
  std::istringstream in(line);
  std::string count_text;
  if (!(in >> count_text)) throw std::invalid_argument("accountant event line is empty");
  errno = 0;
  char* end = nullptr;
  const long long count = std::strtoll(count_text.c_str(), &end, 10);
  if (end != count_text.c_str() + count_text.size() || errno == ERANGE || count < 1)
    throw std::invalid_argument("accountant event line '" + line +
                                "': the step count must be an integer >= 1");
  std::string rest;
  std::getline(in, rest);
  return {Mechanism::parse(rest), static_cast<std::int64_t>(count)};
}

std::string Accountant::serialise() const {
  std::string out = subsample_ ? subsample_->to_string() + "\n" : std::string();
  for (const AccountantEvent& e : history_) out += event_line(e.mechanism, e.count) + "\n";
  return out;
}

void Accountant::restore(const std::string& text) {
  std::vector<AccountantEvent> history;
  std::optional<Subsample> subsample;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank line
    try {
      if (line.rfind("subsample", 0) == 0) {
        if (subsample || !history.empty())
          throw std::invalid_argument("a subsample line must come first, and once");
        subsample = Subsample::parse(line);
        continue;
      }
      const AccountantEvent e = parse_event_line(line);
      cached_rdp(e.mechanism);
      append(history, e.mechanism, e.count);
    } catch (const std::invalid_argument& err) {
      throw std::invalid_argument("accountant history line " + std::to_string(number) + ": " +
                                  err.what());
    }
  }
  history_ = std::move(history);
  subsample_ = subsample;
}

}  // namespace dpgnn::privacy
