// The run's privacy accountant: history of (mechanism, count) events, cached per-step RDP,
// additive composition over orders (Mironov 2017, Proposition 1), exact text round trip.
// See accountant.h for why the history is merged and recomputed rather than accumulated.
#include "dpgnn/privacy/accountant.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"

namespace dpgnn::privacy {

Accountant::Accountant(std::vector<double> orders, Conversion conversion)
    : orders_(orders.empty() ? default_orders() : std::move(orders)), conversion_(conversion) {
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

EpsilonAtOrder Accountant::epsilon(double delta) const {
  validate_delta(delta);
  if (history_.empty()) return {0.0, orders_.front()};
  return epsilon_of_run(orders_, total_rdp(), delta, conversion_, subsample_);
}

DeltaAtOrder Accountant::delta(double epsilon) const {
  if (history_.empty()) return {0.0, orders_.front()};
  return delta_of_run(orders_, total_rdp(), epsilon, conversion_, subsample_);
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
  return e.epsilon > target_epsilon;
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
