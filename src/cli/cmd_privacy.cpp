// `dpgnn privacy`: the privacy accountant on the command line — epsilon for a planned run,
// or the noise multiplier (or the number of steps) that meets a target. The JSON keys are a
// contract other tools rely on (docs/privacy.md, docs/cli.md):
//   dpgnn privacy --scheme wor --dataset-size n --batch-size m --noise-multiplier x --steps T --delta d --json
//   dpgnn privacy --scheme poisson --sampling-rate q --noise-multiplier x --steps T --delta d --json
//   dpgnn privacy --scheme dpgnn --dataset-size N --batch-size m --max-degree K --layers r
//                 --noise-multiplier x --steps T --delta d --json
//   dpgnn privacy --scheme groupwor --dataset-size n --batch-size m --group-size g
//                 --noise-multiplier x --steps T --delta d --json
//   dpgnn privacy --scheme exponential|laplace --noise-multiplier x --steps T --delta d --json
//                 (T = the number of selections / Laplace-noised values)
//   dpgnn privacy --ledger RUN/ledger.jsonl [--delta d] [--json]   (delta: the run's own by default)
//                 (the total of a run's ledger: pre-training releases and steps, as resume rebuilds it)
// --accountant pld|rdp (default pld: privacy loss distributions where a dominating pair is
// proven — every scheme but exponential — reported as min(PLD, RDP); RDP for exponential;
// with --ledger the default is the accountant the run used, from its header's config);
// --compare prints both accountants and their ratio.
// --target-epsilon e instead of --noise-multiplier calibrates the noise multiplier;
// --target-epsilon e with --noise-multiplier and without --steps gives the largest number of
// steps. All arithmetic lives in privacy/ (standard library only); this file only parses,
// checks which options a scheme needs, and prints. Bad values are reported by privacy/ as
// std::invalid_argument and by this file as UsageError; both exit with code 2.
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "command.h"
#include "dpgnn/privacy/calibration.h"
#include "dpgnn/privacy/conversion.h"
#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/pld_accountant.h"
#include "dpgnn/privacy/rdp.h"
#include "dpgnn/train/config.h"
#include "dpgnn/train/ledger.h"
#include "dpgnn/util/error.h"

namespace dpgnn::cli {

namespace {

namespace pv = dpgnn::privacy;

struct PrivacyOptions {
  std::string scheme;
  std::string ledger;
  std::optional<std::int64_t> dataset_size, batch_size, max_degree, layers, group_size, steps;
  std::optional<double> sampling_rate, noise_multiplier, target_epsilon, delta;
  std::string conversion = "balle";
  std::string orders;
  std::string accountant;  // empty: pld for a planned run, rdp for --ledger (see accountant_kind)
  bool compare = false;
  bool json = false;
};

// The config a ledger's header binds the run to; nullopt for a ledger without a header.
std::optional<train::Config> bound_config(const train::Ledger& ledger, const std::string& path) {
  if (!ledger.binding) return std::nullopt;
  return train::parse_config(ledger.binding->at("config").get<std::string>(), path, {});
}

// --accountant, or its default: pld for a planned run; for --ledger the accountant the run used
// (`run_config`, its header's config: privacy.accountant), so the replay reproduces the run's
// own total; rdp for a ledger without a header (dpgnn 0.1 accounted by RDP).
pv::AccountantKind accountant_kind(const PrivacyOptions& o, const std::optional<train::Config>& run_config = std::nullopt) {
  if (o.accountant.empty() && !o.ledger.empty())
    return run_config ? pv::parse_accountant(run_config->privacy.accountant) : pv::AccountantKind::kRdp;
  if (o.accountant.empty()) return pv::AccountantKind::kPld;
  try {
    return pv::parse_accountant(o.accountant);
  } catch (const std::invalid_argument&) {
    throw UsageError("privacy: --accountant must be pld or rdp, got '" + o.accountant + "'");
  }
}

// What the printed epsilon came from: "pld" or "rdp" (pld falls back to rdp per history).
std::string source_of(const pv::EpsilonAtOrder& e) { return e.pld ? "pld" : "rdp"; }

std::string neighbouring_relation(pv::Scheme s) {
  switch (s) {
    case pv::Scheme::kWor: return "replace-one";
    case pv::Scheme::kDpGnn: return "node-level add/remove (node with its edges)";
    case pv::Scheme::kGroupWor: return "replace-one, a unit in at most g examples";
    case pv::Scheme::kPoisson:
    case pv::Scheme::kGaussian: return "add/remove";
    case pv::Scheme::kExponential: return "any, with utility sensitivity Delta";
    case pv::Scheme::kLaplace: return "any, with sensitivity Delta";
    case pv::Scheme::kRandomizedResponse: return "replace-one (one unit's value)";
  }
  return "";
}

std::string sensitivity_text(pv::Scheme s) {
  switch (s) {
    case pv::Scheme::kWor: return "2C";
    case pv::Scheme::kDpGnn: return "2C*N(K,r)";
    case pv::Scheme::kGroupWor: return "2C*g";
    case pv::Scheme::kPoisson:
    case pv::Scheme::kGaussian: return "C";
    case pv::Scheme::kExponential:
    case pv::Scheme::kLaplace:
    case pv::Scheme::kRandomizedResponse: return "Delta";
  }
  return "";
}

// What the noise multiplier multiplies: the Gaussian's std, or the Gumbel / Laplace scale.
std::string noise_name(pv::Scheme s) {
  if (s == pv::Scheme::kExponential) return "Gumbel scale";
  if (s == pv::Scheme::kLaplace) return "Laplace scale";
  if (s == pv::Scheme::kRandomizedResponse) return "1/epsilon";
  return "sigma";
}

void forbid(bool given, const std::string& option, const std::string& scheme) {
  if (given)
    throw UsageError("privacy: " + option + " is not used by --scheme " + scheme);
}

void need(bool given, const std::string& option, const std::string& scheme) {
  if (!given) throw UsageError("privacy: --scheme " + scheme + " needs " + option);
}

// The sampling described by the options, with a placeholder noise multiplier of 1 when
// the noise is to be calibrated.
pv::Mechanism mechanism_from(const PrivacyOptions& o) {
  const pv::Scheme scheme = [&] {
    try {
      return pv::parse_scheme(o.scheme);
    } catch (const std::invalid_argument&) {
      throw UsageError("privacy: --scheme must be one of wor, poisson, dpgnn, groupwor, "
                       "gaussian, exponential, laplace; got '" + o.scheme + "'");
    }
  }();
  const double z = o.noise_multiplier.value_or(1.0);
  const std::string& s = o.scheme;
  auto check_rate_consistent = [&](const pv::Mechanism& m) {
    if (o.sampling_rate && std::fabs(*o.sampling_rate - m.sampling_rate) >
                               1e-12 * m.sampling_rate)
      throw UsageError("privacy: --sampling-rate " + std::to_string(*o.sampling_rate) +
                       " contradicts --batch-size / --dataset-size = " +
                       std::to_string(m.sampling_rate));
  };
  if (scheme != pv::Scheme::kGroupWor) forbid(o.group_size.has_value(), "--group-size", s);
  switch (scheme) {
    case pv::Scheme::kRandomizedResponse:
      throw UsageError("privacy: --scheme rr (randomized response, DPAR's label release) is read from a run's "
                       "ledger only: use dpgnn privacy --ledger RUN/ledger.jsonl");
    case pv::Scheme::kGaussian:
    case pv::Scheme::kExponential:
    case pv::Scheme::kLaplace:
      forbid(o.dataset_size.has_value(), "--dataset-size", s);
      forbid(o.batch_size.has_value(), "--batch-size", s);
      forbid(o.max_degree.has_value(), "--max-degree", s);
      forbid(o.layers.has_value(), "--layers", s);
      if (o.sampling_rate && *o.sampling_rate != 1.0)
        throw UsageError("privacy: --scheme " + s + " samples nothing (--sampling-rate must be 1)");
      if (scheme == pv::Scheme::kExponential) return pv::Mechanism::exponential(z);
      if (scheme == pv::Scheme::kLaplace) return pv::Mechanism::laplace(z);
      return pv::Mechanism::gaussian(z);
    case pv::Scheme::kWor: {
      need(o.dataset_size.has_value(), "--dataset-size", s);
      need(o.batch_size.has_value(), "--batch-size", s);
      forbid(o.max_degree.has_value(), "--max-degree", s);
      forbid(o.layers.has_value(), "--layers", s);
      const pv::Mechanism m = pv::Mechanism::wor(*o.dataset_size, *o.batch_size, z);
      check_rate_consistent(m);
      return m;
    }
    case pv::Scheme::kPoisson: {
      forbid(o.max_degree.has_value(), "--max-degree", s);
      forbid(o.layers.has_value(), "--layers", s);
      if (o.dataset_size.has_value() != o.batch_size.has_value())
        throw UsageError("privacy: --scheme poisson takes --sampling-rate, or both "
                         "--dataset-size and --batch-size (rate = batch / dataset)");
      if (o.dataset_size) {
        // Expected batch m of n: validate as for WOR, then use q = m / n.
        const pv::Mechanism sizes = pv::Mechanism::wor(*o.dataset_size, *o.batch_size, z);
        check_rate_consistent(sizes);
        return pv::Mechanism::poisson(sizes.sampling_rate, z);
      }
      need(o.sampling_rate.has_value(), "--sampling-rate", s);
      return pv::Mechanism::poisson(*o.sampling_rate, z);
    }
    case pv::Scheme::kDpGnn: {
      need(o.dataset_size.has_value(), "--dataset-size", s);
      need(o.batch_size.has_value(), "--batch-size", s);
      need(o.max_degree.has_value(), "--max-degree", s);
      need(o.layers.has_value(), "--layers", s);
      const pv::Mechanism m =
          pv::Mechanism::dpgnn(*o.dataset_size, *o.batch_size, *o.max_degree, *o.layers, z);
      check_rate_consistent(m);
      return m;
    }
    case pv::Scheme::kGroupWor: {
      need(o.dataset_size.has_value(), "--dataset-size", s);
      need(o.batch_size.has_value(), "--batch-size", s);
      need(o.group_size.has_value(), "--group-size", s);
      forbid(o.max_degree.has_value(), "--max-degree", s);
      forbid(o.layers.has_value(), "--layers", s);
      const pv::Mechanism m =
          pv::Mechanism::group_wor(*o.dataset_size, *o.batch_size, *o.group_size, z);
      check_rate_consistent(m);
      return m;
    }
  }
  throw UsageError("privacy: unknown scheme");
}

// The epsilon of a run's ledger: every line's mechanism with its count, composed (the same
// accountant a resumed run rebuilds, train/ledger.h).
int run_ledger(const PrivacyOptions& o) {
  for (const auto& [given, name] : std::vector<std::pair<bool, const char*>>{
           {!o.scheme.empty(), "--scheme"}, {o.noise_multiplier.has_value(), "--noise-multiplier"},
           {o.target_epsilon.has_value(), "--target-epsilon"}, {o.steps.has_value(), "--steps"},
           {o.dataset_size.has_value(), "--dataset-size"}, {o.batch_size.has_value(), "--batch-size"}})
    if (given) throw UsageError(std::string("privacy: ") + name + " is not used with --ledger (the ledger says it)");
  const train::Ledger ledger = train::read_ledger_file(o.ledger);  // read once: it can hold 10^5 lines
  const std::optional<train::Config> run_config = bound_config(ledger, o.ledger);
  // --delta defaults to the run's own (the header's config); a ledger without a header needs it.
  double delta = 0;
  if (o.delta) {
    delta = *o.delta;
  } else if (run_config) {
    delta = run_config->privacy.delta;
  } else {
    throw UsageError("privacy: --delta is required for " + o.ledger +
                     " (it has no header naming the run's delta; e.g. --delta 1e-5)");
  }
  pv::validate_delta(delta);
  const pv::Conversion conversion = pv::parse_conversion(o.conversion);
  const std::vector<double> orders = o.orders.empty() ? pv::default_orders() : pv::parse_orders(o.orders);
  if (o.compare) throw UsageError("privacy: --compare is not used with --ledger (run it twice with --accountant)");
  const pv::AccountantKind kind = accountant_kind(o, run_config);
  const auto& entries = ledger.entries;
  // The ledger's history, replayed into an accountant of the chosen kind.
  pv::Accountant acc(kind, orders, conversion);
  acc.restore(train::accountant_from_ledger(entries, conversion, orders).serialise());
  const pv::EpsilonAtOrder spent = acc.epsilon(delta);
  const std::int64_t steps = train::sgd_steps(entries);
  const std::int64_t releases = static_cast<std::int64_t>(entries.size()) - steps;
  if (o.json) {
    nlohmann::json events = nlohmann::json::array();
    for (const auto& ev : acc.history()) events.push_back(pv::Accountant::event_line(ev.mechanism, ev.count));
    std::cout << nlohmann::json{{"mode", "ledger"},       {"ledger", o.ledger},
                                {"steps", steps},         {"release_lines", releases},
                                {"events", events},       {"delta", delta},
                                {"epsilon", spent.epsilon}, {"order", spent.order},
                                {"accountant", pv::accountant_name(kind)}, {"epsilon_from", source_of(spent)},
                                {"conversion", pv::conversion_name(conversion)}, {"num_orders", orders.size()},
                                {"subsample", acc.subsample() ? nlohmann::json(acc.subsample()->to_string())
                                                              : nlohmann::json(nullptr)}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << o.ledger << ": " << releases << " release line(s), " << steps << " steps\n";
  if (acc.subsample())
    std::cout << "  the run is on a hidden uniform sample, " << acc.subsample()->to_string() << " (q = "
              << acc.subsample()->rate() << "): epsilon amplified by it (Balle, Barthe & Gaboardi 2018, Sec. 5)\n";
  for (const auto& ev : acc.history()) std::cout << "  " << pv::Accountant::event_line(ev.mechanism, ev.count) << "\n";
  std::cout << "epsilon = " << spent.epsilon << " at delta = " << delta << " ("
            << (spent.pld ? std::string("privacy loss distribution")
                          : "RDP, order " + std::to_string(spent.order) + ", " + pv::conversion_name(conversion) +
                                " conversion")
            << ")\n";
  return 0;
}

// One accountant's answer for a planned run: the epsilon (and the calibrated z or step count).
struct Answer {
  pv::Mechanism mechanism;
  std::int64_t steps = 0;
  pv::EpsilonAtOrder spent;
};

// What a planned run asks: "epsilon" (z and steps given), "calibrate_noise" (target and
// steps) or "max_steps" (z and target).
std::string planned_mode(const PrivacyOptions& o) {
  if (o.noise_multiplier && o.target_epsilon) {
    if (o.steps)
      throw UsageError("privacy: give --noise-multiplier or --target-epsilon with --steps, not "
                       "both (both without --steps computes the largest number of steps)");
    return "max_steps";
  }
  if (!o.steps) throw UsageError("privacy: --steps is required (number of training steps)");
  return o.target_epsilon ? "calibrate_noise" : "epsilon";
}

Answer solve_planned(const PrivacyOptions& o, const pv::Mechanism& sampling, const std::vector<double>& orders,
                     pv::Conversion conversion, pv::AccountantKind k) {
  Answer a{sampling, 0, {}};
  if (o.noise_multiplier && o.target_epsilon) {
    const pv::StepsCalibration c =
        pv::calibrate_steps(sampling, *o.target_epsilon, *o.delta, std::int64_t{1} << 40, orders, conversion, k);
    a.steps = c.steps;
    a.spent = {c.epsilon, c.order, c.pld};
  } else if (o.target_epsilon) {
    pv::CalibrationOptions copt;
    copt.orders = orders;
    copt.conversion = conversion;
    copt.accountant = k;
    const pv::NoiseCalibration c = pv::calibrate_noise_multiplier(sampling, *o.steps, *o.target_epsilon, *o.delta, copt);
    a.mechanism = sampling.with_noise_multiplier(c.noise_multiplier);
    a.steps = *o.steps;
    a.spent = {c.epsilon, c.order, c.pld};
  } else {
    a.steps = *o.steps;
    pv::Accountant acc(k, orders, conversion);
    acc.step(sampling, a.steps);
    a.spent = acc.epsilon(*o.delta);
  }
  return a;
}

// --compare: both accountants side by side; ratio = rdp / pld of what the mode computes
// (epsilon, noise multiplier, or steps: pld / rdp for steps, so that > 1 means pld is better).
struct Comparison {
  const Answer* pld = nullptr;
  const Answer* rdp = nullptr;
  double ratio = 0.0;
  std::string ratio_of;
};

Comparison compare(const std::string& mode, pv::AccountantKind kind, const Answer& answer, const Answer& other) {
  Comparison c;
  c.pld = kind == pv::AccountantKind::kPld ? &answer : &other;
  c.rdp = kind == pv::AccountantKind::kPld ? &other : &answer;
  if (mode == "epsilon") {
    c.ratio_of = "epsilon rdp / pld";
    c.ratio = c.rdp->spent.epsilon / c.pld->spent.epsilon;
  } else if (mode == "calibrate_noise") {
    c.ratio_of = "noise_multiplier rdp / pld";
    c.ratio = c.rdp->mechanism.noise_multiplier / c.pld->mechanism.noise_multiplier;
  } else {
    c.ratio_of = "steps pld / rdp";
    c.ratio = static_cast<double>(c.pld->steps) / static_cast<double>(c.rdp->steps);
  }
  return c;
}

nlohmann::json planned_json(const PrivacyOptions& o, const std::string& mode, pv::AccountantKind kind,
                            pv::Conversion conversion, std::size_t num_orders, const Answer& answer,
                            const std::optional<Comparison>& comparison) {
  const pv::Mechanism& mechanism = answer.mechanism;
  const pv::EpsilonAtOrder& spent = answer.spent;
  nlohmann::json j = {
      {"scheme", pv::scheme_name(mechanism.scheme)},
      {"mode", mode},
      {"neighbouring", neighbouring_relation(mechanism.scheme)},
      {"sensitivity", sensitivity_text(mechanism.scheme)},
      {"sampling_rate", mechanism.sampling_rate},
      {"noise_multiplier", mechanism.noise_multiplier},
      {"steps", answer.steps},
      {"delta", *o.delta},
      {"epsilon", spent.epsilon},
      {"order", spent.order},
      {"accountant", pv::accountant_name(kind)},
      {"epsilon_from", source_of(spent)},
      {"conversion", pv::conversion_name(conversion)},
      {"num_orders", num_orders},
  };
  if (mechanism.scheme == pv::Scheme::kWor || mechanism.scheme == pv::Scheme::kDpGnn ||
      mechanism.scheme == pv::Scheme::kGroupWor || o.dataset_size) {
    j["dataset_size"] = *o.dataset_size;
    j["batch_size"] = *o.batch_size;
  }
  if (mechanism.scheme == pv::Scheme::kDpGnn) {
    j["max_degree"] = mechanism.max_degree;
    j["layers"] = mechanism.layers;
    j["n_k_r"] = mechanism.group_size();
  }
  if (mechanism.scheme == pv::Scheme::kGroupWor) j["group_size"] = mechanism.group_size();
  if (o.target_epsilon) j["target_epsilon"] = *o.target_epsilon;
  if (comparison) {
    auto side = [&](const Answer& a) {
      return nlohmann::json{{"epsilon", a.spent.epsilon}, {"order", a.spent.order},
                            {"epsilon_from", source_of(a.spent)},
                            {"noise_multiplier", a.mechanism.noise_multiplier}, {"steps", a.steps}};
    };
    j["compare"] = {{"pld", side(*comparison->pld)}, {"rdp", side(*comparison->rdp)}, {"ratio", comparison->ratio},
                    {"ratio_of", comparison->ratio_of}};
  }
  return j;
}

void print_planned(const PrivacyOptions& o, const nlohmann::json& j, const std::string& mode, pv::Conversion conversion,
                   const Answer& answer, const std::optional<Comparison>& comparison) {
  const pv::Mechanism& mechanism = answer.mechanism;
  const pv::EpsilonAtOrder& spent = answer.spent;
  std::ostringstream out;
  out << "scheme " << j["scheme"].get<std::string>() << " (" << j["neighbouring"].get<std::string>()
      << "), sampling rate " << mechanism.sampling_rate;
  if (mechanism.scheme == pv::Scheme::kDpGnn) out << ", N(K,r) = " << mechanism.group_size();
  if (mechanism.scheme == pv::Scheme::kGroupWor) out << ", g = " << mechanism.group_size();
  out << "\nnoise multiplier " << mechanism.noise_multiplier << " (" << noise_name(mechanism.scheme) << " = "
      << mechanism.noise_multiplier << " x " << sensitivity_text(mechanism.scheme) << ")"
      << (mode == "calibrate_noise" ? ", calibrated" : "") << "\n"
      << answer.steps << " steps" << (mode == "max_steps" ? " (the most that fit the target)" : "")
      << ": epsilon = " << spent.epsilon << " at delta = " << *o.delta << " (";
  if (spent.pld)
    out << "privacy loss distribution";
  else
    out << "RDP, order " << spent.order << ", " << pv::conversion_name(conversion) << " conversion";
  out << ")\n";
  if (comparison) {
    auto line = [&](const char* name, const Answer& a) {
      out << "  " << name << ": epsilon " << a.spent.epsilon << ", noise multiplier " << a.mechanism.noise_multiplier
          << ", " << a.steps << " steps" << (a.spent.pld || std::string(name) == "rdp" ? "" : " (RDP fallback)")
          << "\n";
    };
    line("pld", *comparison->pld);
    line("rdp", *comparison->rdp);
    out << "  ratio (" << comparison->ratio_of << ") = " << comparison->ratio << "\n";
  }
  std::cout << out.str();
}

int run_privacy(const PrivacyOptions& o) {
  if (!o.ledger.empty()) return run_ledger(o);
  if (o.scheme.empty()) throw UsageError("privacy: give --scheme (a planned run) or --ledger (a run's ledger)");
  const pv::Mechanism sampling = mechanism_from(o);
  if (!o.delta) throw UsageError("privacy: --delta is required (e.g. --delta 1e-5)");
  pv::validate_delta(*o.delta);
  const pv::Conversion conversion = pv::parse_conversion(o.conversion);
  const std::vector<double> orders = o.orders.empty() ? pv::default_orders()
                                                      : pv::parse_orders(o.orders);
  if (!o.noise_multiplier && !o.target_epsilon)
    throw UsageError("privacy: give --noise-multiplier (to compute epsilon) or "
                     "--target-epsilon (to calibrate the noise multiplier)");
  // CLI11 clamps out-of-range integers to INT64_MAX, so an upper bound is checked too.
  if (o.steps && (*o.steps < 1 || *o.steps > (std::int64_t{1} << 53)))
    throw UsageError("privacy: --steps must be in [1, 2^53], got " + std::to_string(*o.steps));
  if (o.target_epsilon && !(std::isfinite(*o.target_epsilon) && *o.target_epsilon > 0.0))
    throw UsageError("privacy: --target-epsilon must be a finite number > 0, got " +
                     std::to_string(*o.target_epsilon));

  const pv::AccountantKind kind = accountant_kind(o);
  const std::string mode = planned_mode(o);
  const Answer answer = solve_planned(o, sampling, orders, conversion, kind);
  std::optional<Answer> other;  // --compare: the other accountant
  if (o.compare)
    other = solve_planned(o, sampling, orders, conversion,
                          kind == pv::AccountantKind::kPld ? pv::AccountantKind::kRdp : pv::AccountantKind::kPld);
  std::optional<Comparison> comparison;
  if (other) comparison = compare(mode, kind, answer, *other);
  const nlohmann::json j = planned_json(o, mode, kind, conversion, orders.size(), answer, comparison);
  if (o.json) {
    std::cout << j.dump() << "\n";
    return 0;
  }
  print_planned(o, j, mode, conversion, answer, comparison);
  return 0;
}

}  // namespace

void add_privacy_command(CLI::App& root, Registry& registry) {
  auto opt = std::make_shared<PrivacyOptions>();
  CLI::App* app = root.add_subcommand(
      "privacy", "Privacy accounting: epsilon of a run, or calibrate the noise multiplier");
  app->add_option("--scheme", opt->scheme,
                  "wor (DRW family: m of n without replacement, replace-one), poisson "
                  "(DP-MLP: rate q, add/remove), dpgnn (node-level DP-GNN), groupwor (m of n "
                  "without replacement, a unit in at most g examples), gaussian (no sampling), "
                  "exponential (one Gumbel-max selection; --steps = selections), laplace (one "
                  "Laplace-noised value; --steps = values)");
  app->add_option("--ledger", opt->ledger,
                  "a run's ledger.jsonl: the epsilon of everything it records (pre-training releases and "
                  "steps), at --delta");
  app->add_option("--dataset-size", opt->dataset_size,
                  "n: number of subgraphs (wor), training nodes (dpgnn) or examples (groupwor)");
  app->add_option("--batch-size", opt->batch_size, "m: batch size (wor, dpgnn, groupwor)");
  app->add_option("--group-size", opt->group_size,
                  "g: the most examples one unit influences (groupwor)");
  app->add_option("--sampling-rate", opt->sampling_rate, "q: Poisson sampling rate in (0, 1]");
  app->add_option("--max-degree", opt->max_degree, "K: in-degree bound (dpgnn)");
  app->add_option("--layers", opt->layers, "r: number of GNN layers (dpgnn)");
  app->add_option("--noise-multiplier", opt->noise_multiplier,
                  "sigma / sensitivity (2C wor, C poisson/gaussian, 2C*N(K,r) dpgnn, 2C*g "
                  "groupwor); Gumbel or Laplace scale / Delta (exponential, laplace)");
  app->add_option("--target-epsilon", opt->target_epsilon,
                  "calibrate the noise multiplier (or, with --noise-multiplier and no --steps, "
                  "the number of steps) to this epsilon");
  app->add_option("--steps", opt->steps, "number of training steps T");
  app->add_option("--delta", opt->delta, "delta in (0, 1); with --ledger, default the run's own");
  app->add_option("--conversion", opt->conversion,
                  "RDP -> (epsilon, delta): balle (default, Balle et al. 2020) or mironov");
  app->add_option("--orders", opt->orders,
                  "comma-separated Rényi orders (default: 1.1..10.9 by 0.1, 11..63, 128, 256, "
                  "512, 1024)");
  app->add_option("--accountant", opt->accountant,
                  "pld (default: privacy loss distributions where a dominating pair is proven — every "
                  "scheme but exponential, which keeps RDP) or rdp; with --ledger the default is the "
                  "accountant the run used");
  app->add_flag("--compare", opt->compare, "Print both accountants and their ratio");
  app->add_flag("--json", opt->json, "Print one JSON object");
  registry.add(app, [opt]() { return run_privacy(*opt); });
}

}  // namespace dpgnn::cli
