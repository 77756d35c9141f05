// Validated description of one private step or release (see mechanism.h), its exact text
// form, and N(K, r) of Daigavane et al. (Sec. 4: a node reaches at most sum_{i<=r} K^i
// training nodes through r layers of in-degree-capped message passing).
#include "dpgnn/privacy/mechanism.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace dpgnn::privacy {

namespace {

std::string fmt_double(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

void check_noise(double z) {
  if (!std::isfinite(z) || !(z > 0.0))
    throw std::invalid_argument("noise_multiplier must be a finite number > 0, got " +
                                fmt_double(z));
}

void check_sizes(const char* what, std::int64_t n, std::int64_t m) {
  if (n < 1)
    throw std::invalid_argument(std::string(what) + ": dataset_size must be >= 1, got " +
                                std::to_string(n));
  if (m < 1 || m > n)
    throw std::invalid_argument(std::string(what) + ": batch_size must be in [1, dataset_size = " +
                                std::to_string(n) + "], got " + std::to_string(m));
}

double parse_double_exact(const std::string& key, const std::string& value) {
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE)
    throw std::invalid_argument("mechanism text: '" + key + "=" + value + "' is not a number");
  return x;
}

std::int64_t parse_int_exact(const std::string& key, const std::string& value) {
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE)
    throw std::invalid_argument("mechanism text: '" + key + "=" + value + "' is not an integer");
  return static_cast<std::int64_t>(x);
}

}  // namespace

std::string scheme_name(Scheme scheme) {
  switch (scheme) {
    case Scheme::kGaussian: return "gaussian";
    case Scheme::kWor: return "wor";
    case Scheme::kPoisson: return "poisson";
    case Scheme::kDpGnn: return "dpgnn";
    case Scheme::kExponential: return "exponential";
    case Scheme::kLaplace: return "laplace";
    case Scheme::kGroupWor: return "groupwor";
    case Scheme::kRandomizedResponse: return "rr";
  }
  throw std::logic_error("scheme_name: unknown scheme");
}

Scheme parse_scheme(const std::string& name) {
  if (name == "gaussian") return Scheme::kGaussian;
  if (name == "wor") return Scheme::kWor;
  if (name == "poisson") return Scheme::kPoisson;
  if (name == "dpgnn") return Scheme::kDpGnn;
  if (name == "exponential") return Scheme::kExponential;
  if (name == "laplace") return Scheme::kLaplace;
  if (name == "groupwor") return Scheme::kGroupWor;
  if (name == "rr") return Scheme::kRandomizedResponse;
  throw std::invalid_argument(
      "scheme must be one of gaussian, wor, poisson, dpgnn, exponential, laplace, groupwor, rr; "
      "got '" + name + "'");
}

std::int64_t neighbourhood_bound(std::int64_t max_degree, std::int64_t layers) {
  if (max_degree < 1)
    throw std::invalid_argument("max_degree (K) must be >= 1, got " + std::to_string(max_degree));
  if (layers < 0)
    throw std::invalid_argument("layers (r) must be >= 0, got " + std::to_string(layers));
  // sum_{i=0}^{r} K^i, kept exact: stop before exceeding 2^53.
  const std::int64_t limit = std::int64_t{1} << 53;
  std::int64_t total = 0, power = 1;
  for (std::int64_t i = 0; i <= layers; ++i) {
    total += power;
    if (total > limit)
      throw std::invalid_argument("N(K, r) = sum_{i<=r} K^i with K = " +
                                  std::to_string(max_degree) + ", r = " +
                                  std::to_string(layers) + " exceeds 2^53");
    if (i < layers) {
      if (power > limit / max_degree)
        throw std::invalid_argument("N(K, r) = sum_{i<=r} K^i with K = " +
                                    std::to_string(max_degree) + ", r = " +
                                    std::to_string(layers) + " exceeds 2^53");
      power *= max_degree;
    }
  }
  return total;
}

// The fields every fixed-size without-replacement scheme shares (m of n, rate m / n), after
// the caller has checked the sizes and z.
static Mechanism sampled_without_replacement(Scheme scheme, std::int64_t dataset_size, std::int64_t batch_size,
                                      double noise_multiplier) {
  Mechanism m;
  m.scheme = scheme;
  m.noise_multiplier = noise_multiplier;
  m.dataset_size = dataset_size;
  m.batch_size = batch_size;
  m.sampling_rate = static_cast<double>(batch_size) / static_cast<double>(dataset_size);
  return m;
}

// A mechanism applied to the whole input, without sampling (rate 1), after checking z.
static Mechanism unsampled(Scheme scheme, double noise_multiplier) {
  check_noise(noise_multiplier);
  Mechanism m;
  m.scheme = scheme;
  m.noise_multiplier = noise_multiplier;
  m.sampling_rate = 1.0;
  return m;
}

Mechanism Mechanism::gaussian(double noise_multiplier) { return unsampled(Scheme::kGaussian, noise_multiplier); }

Mechanism Mechanism::wor(std::int64_t dataset_size, std::int64_t batch_size,
                         double noise_multiplier) {
  check_sizes("wor", dataset_size, batch_size);
  check_noise(noise_multiplier);
  Mechanism m = sampled_without_replacement(Scheme::kWor, dataset_size, batch_size, noise_multiplier);
  return m;
}

Mechanism Mechanism::poisson(double sampling_rate, double noise_multiplier) {
  if (!std::isfinite(sampling_rate) || !(sampling_rate > 0.0) || sampling_rate > 1.0)
    throw std::invalid_argument("poisson: sampling_rate must be in (0, 1], got " +
                                fmt_double(sampling_rate));
  check_noise(noise_multiplier);
  Mechanism m;
  m.scheme = Scheme::kPoisson;
  m.noise_multiplier = noise_multiplier;
  m.sampling_rate = sampling_rate;
  return m;
}

Mechanism Mechanism::dpgnn(std::int64_t dataset_size, std::int64_t batch_size,
                           std::int64_t max_degree, std::int64_t layers,
                           double noise_multiplier) {
  check_sizes("dpgnn", dataset_size, batch_size);
  if (layers < 1)
    throw std::invalid_argument("dpgnn: layers (r) must be >= 1, got " + std::to_string(layers));
  const std::int64_t group = neighbourhood_bound(max_degree, layers);
  if (group > dataset_size)
    throw std::invalid_argument("dpgnn: N(K, r) = " + std::to_string(group) +
                                " (K = " + std::to_string(max_degree) + ", r = " +
                                std::to_string(layers) +
                                ") must not exceed dataset_size (training nodes) = " +
                                std::to_string(dataset_size));
  check_noise(noise_multiplier);
  Mechanism m = sampled_without_replacement(Scheme::kDpGnn, dataset_size, batch_size, noise_multiplier);
  m.max_degree = max_degree;
  m.layers = layers;
  return m;
}

Mechanism Mechanism::group_wor(std::int64_t dataset_size, std::int64_t batch_size,
                               std::int64_t group_bound, double noise_multiplier) {
  // Daigavane et al., Theorem 1 with the group size g in place of N(K, r): rho ~
  // Hypergeometric(n, g, m) needs 1 <= g <= n (as rdp_dpgnn checks).
  check_sizes("groupwor", dataset_size, batch_size);
  if (group_bound < 1 || group_bound > dataset_size)
    throw std::invalid_argument("groupwor: group_bound (g) must be in [1, dataset_size = " +
                                std::to_string(dataset_size) + "], got " +
                                std::to_string(group_bound));
  check_noise(noise_multiplier);
  Mechanism m = sampled_without_replacement(Scheme::kGroupWor, dataset_size, batch_size, noise_multiplier);
  m.group_bound = group_bound;
  return m;
}

Mechanism Mechanism::exponential(double noise_multiplier) { return unsampled(Scheme::kExponential, noise_multiplier); }

Mechanism Mechanism::laplace(double noise_multiplier) { return unsampled(Scheme::kLaplace, noise_multiplier); }

Mechanism Mechanism::randomized_response(std::int64_t categories, double noise_multiplier) {
  if (categories < 2)
    throw std::invalid_argument("rr: categories (k) must be >= 2, got " + std::to_string(categories));
  Mechanism m = unsampled(Scheme::kRandomizedResponse, noise_multiplier);
  m.categories = categories;
  return m;
}

Mechanism Mechanism::with_noise_multiplier(double noise_multiplier) const {
  check_noise(noise_multiplier);
  Mechanism m = *this;
  m.noise_multiplier = noise_multiplier;
  return m;
}

std::int64_t Mechanism::group_size() const {
  if (scheme == Scheme::kDpGnn) return neighbourhood_bound(max_degree, layers);
  if (scheme == Scheme::kGroupWor) return group_bound;
  return 1;
}

std::string Mechanism::to_string() const {
  std::string s = scheme_name(scheme);
  switch (scheme) {
    case Scheme::kGaussian:
    case Scheme::kExponential:
    case Scheme::kLaplace: break;
    case Scheme::kWor:
      s += " n=" + std::to_string(dataset_size) + " m=" + std::to_string(batch_size);
      break;
    case Scheme::kPoisson: s += " q=" + fmt_double(sampling_rate); break;
    case Scheme::kDpGnn:
      s += " n=" + std::to_string(dataset_size) + " m=" + std::to_string(batch_size) +
           " K=" + std::to_string(max_degree) + " r=" + std::to_string(layers);
      break;
    case Scheme::kGroupWor:
      s += " n=" + std::to_string(dataset_size) + " m=" + std::to_string(batch_size) +
           " g=" + std::to_string(group_bound);
      break;
    case Scheme::kRandomizedResponse: s += " k=" + std::to_string(categories); break;
  }
  return s + " z=" + fmt_double(noise_multiplier);
}

Mechanism Mechanism::parse(const std::string& text) {
  std::istringstream in(text);
  std::string name;
  if (!(in >> name)) throw std::invalid_argument("mechanism text is empty");
  const Scheme scheme = parse_scheme(name);
  std::map<std::string, std::string> kv;
  std::string token;
  while (in >> token) {
    const auto eq = token.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("mechanism text '" + text + "': expected key=value, got '" +
                                  token + "'");
    if (!kv.emplace(token.substr(0, eq), token.substr(eq + 1)).second)
      throw std::invalid_argument("mechanism text '" + text + "': key '" +
                                  token.substr(0, eq) + "' repeated");
  }
  std::vector<std::string> expected;
  switch (scheme) {
    case Scheme::kGaussian: expected = {"z"}; break;
    case Scheme::kWor: expected = {"m", "n", "z"}; break;
    case Scheme::kPoisson: expected = {"q", "z"}; break;
    case Scheme::kDpGnn: expected = {"K", "m", "n", "r", "z"}; break;
    case Scheme::kExponential:
    case Scheme::kLaplace: expected = {"z"}; break;
    case Scheme::kGroupWor: expected = {"g", "m", "n", "z"}; break;
    case Scheme::kRandomizedResponse: expected = {"k", "z"}; break;
  }
  std::vector<std::string> got;
  for (const auto& [k, v] : kv) got.push_back(k);
  // std::map iterates keys sorted ("K" < "g" < "m" < "n" < "q" < "r" < "z" in ASCII).
  if (got != expected) {
    std::string want;
    for (const auto& k : expected) want += (want.empty() ? "" : ", ") + k;
    throw std::invalid_argument("mechanism text '" + text + "': scheme " + name +
                                " needs exactly the keys " + want);
  }
  const double z = parse_double_exact("z", kv["z"]);
  switch (scheme) {
    case Scheme::kGaussian: return gaussian(z);
    case Scheme::kWor:
      return wor(parse_int_exact("n", kv["n"]), parse_int_exact("m", kv["m"]), z);
    case Scheme::kPoisson: return poisson(parse_double_exact("q", kv["q"]), z);
    case Scheme::kDpGnn:
      return dpgnn(parse_int_exact("n", kv["n"]), parse_int_exact("m", kv["m"]),
                   parse_int_exact("K", kv["K"]), parse_int_exact("r", kv["r"]), z);
    case Scheme::kExponential: return exponential(z);
    case Scheme::kLaplace: return laplace(z);
    case Scheme::kGroupWor:
      return group_wor(parse_int_exact("n", kv["n"]), parse_int_exact("m", kv["m"]),
                       parse_int_exact("g", kv["g"]), z);
    case Scheme::kRandomizedResponse: return randomized_response(parse_int_exact("k", kv["k"]), z);
  }
  throw std::logic_error("Mechanism::parse: unknown scheme");
}

bool Mechanism::operator==(const Mechanism& o) const {
  return scheme == o.scheme && noise_multiplier == o.noise_multiplier &&
         dataset_size == o.dataset_size && batch_size == o.batch_size &&
         sampling_rate == o.sampling_rate && max_degree == o.max_degree && layers == o.layers &&
         group_bound == o.group_bound && categories == o.categories;
}

bool Mechanism::operator<(const Mechanism& o) const {
  return std::tie(scheme, noise_multiplier, dataset_size, batch_size, sampling_rate, max_degree,
                  layers, group_bound, categories) < std::tie(o.scheme, o.noise_multiplier, o.dataset_size,
                                                              o.batch_size, o.sampling_rate, o.max_degree,
                                                              o.layers, o.group_bound, o.categories);
}

}  // namespace dpgnn::privacy
