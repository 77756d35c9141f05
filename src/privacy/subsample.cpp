// Amplification of a whole run by a hidden uniform sample without replacement (subsample.h).
#include "dpgnn/privacy/subsample.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace dpgnn::privacy {

Subsample Subsample::of(std::int64_t population, std::int64_t sample) {
  if (population < 1 || sample < 1 || sample > population)
    throw std::invalid_argument("subsample: need 1 <= m <= n, got n=" + std::to_string(population) +
                                " m=" + std::to_string(sample));
  return Subsample{population, sample};
}

std::string Subsample::to_string() const {
  return "subsample n=" + std::to_string(population) + " m=" + std::to_string(sample);
}

Subsample Subsample::parse(const std::string& text) {
  std::istringstream in(text);
  std::string kind, n_text, m_text, rest;
  in >> kind >> n_text >> m_text;
  auto value = [&](const std::string& field, const char* name) {
    const std::string prefix = std::string(name) + "=";
    if (field.compare(0, prefix.size(), prefix) != 0)
      throw std::invalid_argument("subsample '" + text + "': expected " + prefix + "<integer>");
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(field.substr(prefix.size()), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != field.size() - prefix.size())
      throw std::invalid_argument("subsample '" + text + "': " + prefix + " needs an integer");
    return static_cast<std::int64_t>(v);
  };
  if (kind != "subsample" || (in >> rest))
    throw std::invalid_argument("subsample '" + text + "': expected 'subsample n=<n> m=<m>'");
  return of(value(n_text, "n"), value(m_text, "m"));
}

double amplified_epsilon(double inner, double rate) {
  if (!(rate > 0.0 && rate <= 1.0)) throw std::invalid_argument("subsample rate must be in (0, 1]");
  if (!(inner >= 0.0)) throw std::invalid_argument("epsilon must be >= 0");
  // log(1 + q (e^eps - 1)); for large eps, eps + log(q + (1 - q) e^-eps) avoids overflow.
  if (inner > 700.0) return inner + std::log(rate + (1.0 - rate) * std::exp(-inner));
  return std::log1p(rate * std::expm1(inner));
}

double inner_epsilon(double outer, double rate) {
  if (!(rate > 0.0 && rate <= 1.0)) throw std::invalid_argument("subsample rate must be in (0, 1]");
  if (!(outer >= 0.0)) throw std::invalid_argument("epsilon must be >= 0");
  // e^eps_in - 1 = (e^eps - 1) / q.
  if (outer > 700.0) return outer - std::log(rate);  // (e^eps - 1)/q + 1 ~ e^eps / q
  return std::log1p(std::expm1(outer) / rate);
}

EpsilonAtOrder epsilon_of_run(const std::vector<double>& orders, const std::vector<double>& rdp, double delta,
                              Conversion conversion, const std::optional<Subsample>& subsample) {
  if (!subsample) return epsilon_from_rdp(orders, rdp, delta, conversion);
  const double q = subsample->rate();
  validate_delta(delta);
  if (!(delta / q < 1.0))
    throw std::invalid_argument("subsample: delta / q = " + std::to_string(delta / q) +
                                " must be < 1 (the sample is too small for this delta)");
  EpsilonAtOrder e = epsilon_from_rdp(orders, rdp, delta / q, conversion);
  e.epsilon = amplified_epsilon(e.epsilon, q);
  return e;
}

DeltaAtOrder delta_of_run(const std::vector<double>& orders, const std::vector<double>& rdp, double epsilon,
                          Conversion conversion, const std::optional<Subsample>& subsample) {
  if (!subsample) return delta_from_rdp(orders, rdp, epsilon, conversion);
  const double q = subsample->rate();
  DeltaAtOrder d = delta_from_rdp(orders, rdp, inner_epsilon(epsilon, q), conversion);
  d.delta *= q;
  return d;
}

}  // namespace dpgnn::privacy
