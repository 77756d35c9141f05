// The configuration schema: one table of keys (type, default, constraint, description),
// used to parse, validate, dump and document. LightGBM's config.h keeps default,
// description and check next to each field; this table does the same for YAML.
#include "dpgnn/train/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>

#include "dpgnn/util/error.h"

namespace dpgnn::train {

int cuda_device_index(const Config& c) {
  return c.device.rfind("cuda:", 0) == 0 ? std::stoi(c.device.substr(5)) : -1;
}

namespace {

struct Field {
  std::string key, type, default_text, description;
  std::function<void(Config&, const YAML::Node&, const std::string& file)> set;
  std::function<YAML::Node(const Config&)> get;
};

template <typename T>
T scalar_as(const YAML::Node& n, const std::string& file, const std::string& key, const char* what) {
  if (!n.IsScalar()) throw ConfigError(file, key, std::string("expected ") + what + ", got a " +
                                                      (n.IsMap() ? "mapping" : n.IsSequence() ? "list" : "null"));
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    throw ConfigError(file, key, std::string("expected ") + what + ", got '" + n.Scalar() + "'");
  }
}

// The shortest text that reads back as the same double (fmt's default), so that written
// configs and --help-config say 0.1, not 0.10000000000000001; an exponent gets a ".0"
// ("1.0e-05") so that YAML 1.1 readers (PyYAML) also see a number.
std::string fmt_double(double v) {
  std::string s = fmt::format("{}", v);
  if (const auto e = s.find('e'); e != std::string::npos && s.find('.') == std::string::npos) s.insert(e, ".0");
  return s;
}

// A default as --help-config prints it: true/false, integers, shortest doubles.
template <class T>
std::string default_text(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else {
    return fmt_double(static_cast<double>(v));
  }
}

// A config value as a YAML node; doubles through fmt_double.
template <class T>
YAML::Node yaml_value(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    return YAML::Node(fmt_double(v));
  } else {
    return YAML::Node(v);
  }
}

#define DPGNN_STR(KEY, MEMBER, DESC)                                                          \
  Field{KEY, "string", Config{}.MEMBER, DESC,                                                 \
        [](Config& c, const YAML::Node& n, const std::string& f) {                           \
          c.MEMBER = n.IsNull() ? std::string() : scalar_as<std::string>(n, f, KEY, "a string"); \
        },                                                                                    \
        [](const Config& c) { return YAML::Node(c.MEMBER); }}
#define DPGNN_NUM(KEY, MEMBER, TYPE, TNAME, DESC)                                             \
  Field{KEY, TNAME, default_text(Config{}.MEMBER), DESC,                                      \
        [](Config& c, const YAML::Node& n, const std::string& f) {                           \
          c.MEMBER = scalar_as<TYPE>(n, f, KEY, "a " TNAME);                                  \
        },                                                                                    \
        [](const Config& c) { return yaml_value(c.MEMBER); }}
#define DPGNN_OPT(KEY, MEMBER, TYPE, TNAME, DESC)                                             \
  Field{KEY, TNAME " or null", "null", DESC,                                                  \
        [](Config& c, const YAML::Node& n, const std::string& f) {                           \
          if (n.IsNull() || (n.IsScalar() && (n.Scalar() == "null" || n.Scalar() == "~")))    \
            c.MEMBER.reset();                                                                 \
          else                                                                                \
            c.MEMBER = scalar_as<TYPE>(n, f, KEY, "a " TNAME " or null");                     \
        },                                                                                    \
        [](const Config& c) { return c.MEMBER ? yaml_value(*c.MEMBER) : YAML::Node(YAML::NodeType::Null); }}

// The samplers' and DPAR's keys, which fields() lists after the general ones.
std::vector<Field> sampler_and_dpar_fields() {
  return {
      DPGNN_NUM("sampler.walk_length", sampler.walk_length, int, "integer", "random-walk length L, >= 1"),
      DPGNN_NUM("sampler.restarts", sampler.restarts, int, "integer",
                "walks per root R (drw-r; drw and drw-d use 1), >= 1"),
      DPGNN_NUM("sampler.resample_every", sampler.resample_every, std::int64_t, "integer",
                "drw-d: re-sample the subgraphs every i steps, >= 1"),
      DPGNN_NUM("sampler.max_degree", sampler.max_degree, int, "integer", "dpgnn: in-degree bound K, >= 1"),
      DPGNN_STR("sampler.degree_bound", sampler.degree_bound,
                "dpgnn: paper (SAMPLE-EDGELISTS; not covered by the guarantee, docs/privacy.md) | require (no edge "
                "sampling; the graph's training in-degree must already be <= K; covered)"),
      DPGNN_STR("sampler.edges", sampler.edges,
                "induced (all edges among a subgraph's nodes) | walk (only the edges walked)"),
      DPGNN_NUM("sampler.splits", sampler.splits, std::int64_t, "integer",
                "split: s random disjoint groups of the training nodes (Igamberdiev & Habernal, Sec. 4.4), shared "
                "among the partition's parts in proportion to their training nodes, >= 1"),
      DPGNN_STR("dpar.mechanism", dpar.mechanism,
                "DP-APPR mechanism: gm (Gaussian, Zhang et al. Alg. 3) | em0 (exponential, top-K weights 1/K, Alg. 1 "
                "option I) | em1 (exponential, Laplace-noised weights, option II)"),
      DPGNN_NUM("dpar.appr_fraction", dpar.appr_fraction, double, "number",
                "share of privacy.target_epsilon calibrated for DP-APPR alone, in (0, 1); DP-SGD gets the rest of "
                "the composed budget (paper: 0.5)"),
      DPGNN_NUM("dpar.appr_nodes", dpar.appr_nodes, std::int64_t, "integer",
                "M training nodes, chosen uniformly by the secure generator, that get a DP-APPR vector (paper: 70); "
                "the others aggregate only their own features; 0 = no DP-APPR release (dpar.appr_fraction unused, "
                "every node its own example, the steps accounted by PLD when no other release is made)"),
      DPGNN_NUM("dpar.top_k", dpar.top_k, int, "integer", "K entries kept per DP-APPR vector, >= 1 (paper: 2)"),
      DPGNN_NUM("dpar.alpha", dpar.alpha, double, "number",
                "teleport probability of APPR and of the inference power iteration, in (0, 1) (paper: 0.25)"),
      DPGNN_NUM("dpar.rho", dpar.rho, double, "number", "ISTA l1 regularisation rho, > 0 (paper: 1e-4)"),
      DPGNN_NUM("dpar.tolerance", dpar.tolerance, double, "number",
                "ISTA stopping tolerance (the paper's gamma), > 0 (paper: 1e-4)"),
      DPGNN_NUM("dpar.gm_clip", dpar.gm_clip, double, "number", "C1: l2 clip of an APPR vector (gm), > 0 (paper: 0.01)"),
      DPGNN_NUM("dpar.em_clip", dpar.em_clip, double, "number",
                "C2: clip of each APPR entry (em0, em1), > 0 (paper: 0.001)"),
      DPGNN_NUM("dpar.propagation_steps", dpar.propagation_steps, int, "integer",
                "P power-iteration steps over the evaluation graph at inference (Sec. 4, Eq. 4), >= 0 (paper: 2)"),
      DPGNN_NUM("dpar.graph_sampling_rate", dpar.graph_sampling_rate, double, "number",
                "q' in (0, 1]: train on a hidden uniform sample of round(q' x training nodes), the printed epsilon "
                "amplified by it (Zhang et al. Sec. 3.2; paper: 0.09); 1 = the whole training graph"),
      DPGNN_NUM("dpar.label_fraction", dpar.label_fraction, double, "number",
                "share of privacy.target_epsilon for releasing the training labels by k-ary randomized response, "
                "used at inference beside the model's predictions, in [0, 1); 0 = no release (not in the paper)"),
      DPGNN_NUM("dpar.label_min_epsilon", dpar.label_min_epsilon, double, "number",
                "the label release is made only when label_fraction x target_epsilon is at least this, >= 0 "
                "(below it the released labels are mostly noise and DP-SGD gets the whole budget)"),
      DPGNN_NUM("dpar.choose_steps", dpar.choose_steps, bool, "boolean",
                "with the label release: choose the inference power-iteration steps among 1, 2, 4, 8 by the "
                "released labels (half as evidence, half scored), instead of dpar.propagation_steps; the choice reads the "
                "graph and the training nodes' features without noise: outside the guarantee (summary.json "
                "outside_guarantee)"),
      DPGNN_STR("dpar.center_outputs", dpar.center_outputs,
                "never | always | multiclass: centre the model's outputs over all nodes before the inference "
                "propagation, and propagate with dpar.centered_alpha and dpar.centered_steps (multiclass: only on "
                "single-label data with 3 or more classes, without the label release; with two classes the removed "
                "offset is the class prior, docs/results.md)"),
      DPGNN_NUM("dpar.centered_alpha", dpar.centered_alpha, double, "number",
                "teleport probability of the inference power iteration when the outputs are centred, in (0, 1)"),
      DPGNN_NUM("dpar.centered_steps", dpar.centered_steps, int, "integer",
                "inference power-iteration steps when the outputs are centred, >= 0"),
      DPGNN_STR("dpar.keep_class_shares", dpar.keep_class_shares,
                "never | binary: after the inference propagation, offset each class so that the mean predicted "
                "probabilities over all nodes equal the model's before the propagation (binary: only on single-label "
                "data with two classes, without the label release)"),
      DPGNN_STR("dpar.learner", dpar.learner,
                "sgd | class_sums | auto: how the linear model is learnt: DP-SGD (the paper), or one Gaussian release "
                "of the per-class sums of the training nodes' features, which are its weights (no steps; not in the "
                "paper); auto: class_sums on single-label data with 3 or more classes, without DP-APPR or the label "
                "release, when training nodes x target_epsilon < dpar.class_sums_below, else sgd "
                "(docs/privacy.md, \"DPAR's class sums\")"),
      DPGNN_NUM("dpar.class_sums_below", dpar.class_sums_below, double, "number",
                "dpar.learner auto picks class_sums below this many training nodes x target_epsilon, >= 0"),
  };
}

// The general keys: method, data, model, train, privacy.
std::vector<Field> general_fields() {
  return {
      DPGNN_STR("method", method,
                "drw | drw-r | drw-d (random-walk DP-GNN), dpgnn (node-level DP-GNN baseline), split (graph-split "
                "DP-GCN), dpar (DP-APPR + DP-SGD, node-level), dp-mlp, gcn | mlp (non-private)"),
      DPGNN_STR("device", device, "cpu, cuda or cuda:N (a rank uses its local rank's GPU when just cuda)"),
      DPGNN_STR("data.dataset", data.dataset, "dataset HDF5 file (required)"),
      DPGNN_STR("data.partition", data.partition,
                "partition file from `dpgnn partition`; empty = the dataset as one part (one rank)"),
      Field{"data.prepare", "list of strings", "[]",
            "the dpgnn import/partition commands (without \"dpgnn\") that make data.dataset and data.partition; "
            "`dpgnn prepare --config` runs them, skipping files that exist and verify",
            [](Config& c, const YAML::Node& n, const std::string& f) {
              c.data.prepare.clear();
              if (n.IsNull()) return;
              if (!n.IsSequence())
                throw ConfigError(f, "data.prepare", "expected a list of commands, e.g. [\"import npz --file F --out D.h5\"]");
              for (std::size_t i = 0; i < n.size(); ++i)
                c.data.prepare.push_back(scalar_as<std::string>(n[i], f, "data.prepare", "a command (string)"));
            },
            [](const Config& c) {
              YAML::Node list(YAML::NodeType::Sequence);
              for (const auto& cmd : c.data.prepare) list.push_back(cmd);
              return list;
            }},
      DPGNN_STR("model.arch", model.arch, "gcn | sage | gin | mlp (mlp and dp-mlp always use mlp)"),
      DPGNN_NUM("model.layers", model.layers, int, "integer", "number of GNN layers, 1..3"),
      DPGNN_NUM("model.hidden", model.hidden, int, "integer", "hidden width, >= 1"),
      DPGNN_STR("model.activation", model.activation, "relu | tanh"),
      DPGNN_NUM("model.dropout", model.dropout, double, "number", "dropout probability in [0, 1)"),
      DPGNN_STR("model.input_norm", model.input_norm,
                "none | l2: divide each node's feature row by its Euclidean norm before the model reads it (training, "
                "evaluation, prediction); per-node preprocessing, no privacy cost"),
      DPGNN_NUM("model.bias", model.bias, bool, "boolean",
                "a bias per linear map; false (mlp architecture only: mlp, dp-mlp, dpar) leaves it out, so no noise "
                "lands on a class offset that propagation at inference cannot average away (docs/models.md)"),
      DPGNN_NUM("train.batch_size", train.batch_size, std::int64_t, "integer",
                "m subgraphs per step (uniform without replacement out of all M); 0 = auto: drw, drw-r, drw-d (each "
                "re-sampling epoch's M) and split all M while M <= 4096 (a full batch), else min(256, M/2); dpar all "
                "M; the others min(256, M/2)"),
      DPGNN_NUM("train.lr", train.lr, double, "number", "learning rate, > 0"),
      DPGNN_STR("train.optimizer", train.optimizer, "adam | sgd"),
      DPGNN_NUM("train.momentum", train.momentum, double, "number", "SGD momentum in [0, 1)"),
      DPGNN_NUM("train.weight_decay", train.weight_decay, double, "number", "L2 weight decay, >= 0"),
      DPGNN_NUM("train.max_steps", train.max_steps, std::int64_t, "integer",
                "stop after this many steps (private runs also stop before exceeding the target epsilon)"),
      DPGNN_NUM("train.seed", train.seed, std::uint64_t, "integer",
                "public seed of the initial weights, the random walks and dropout (not of the batches or the noise: "
                "those come from secrets, docs/privacy.md)"),
      DPGNN_NUM("train.eval_every", train.eval_every, std::int64_t, "integer",
                "evaluate on val/test every k steps (0 = only at the end)"),
      DPGNN_NUM("train.checkpoint_every", train.checkpoint_every, std::int64_t, "integer",
                "write a checkpoint every k steps (0 = only at the end)"),
      DPGNN_NUM("train.threads", train.threads, int, "integer",
                "compute threads per rank (LibTorch and OpenBLAS together); 0 = OMP_NUM_THREADS if set, else cores / local "
                "ranks"),
      DPGNN_STR("train.features_on_device", train.features_on_device,
                "auto | always | never: keep the shard's feature rows in the model device's memory and gather each "
                "batch's rows there (auto: on a GPU when they take at most half its free memory, else gathered on "
                "the host into pinned buffers; on the CPU always gathered on the host). Changes speed, not results"),
      DPGNN_NUM("train.ema", train.ema, double, "number",
                "evaluate and save an exponential moving average of the parameters with this decay "
                "(post-processing: no privacy cost); 0 = off"),
      DPGNN_STR("train.model_selection", train.model_selection,
                "last | best_val: the model evaluated at the end and saved is the last one, or the one of the "
                "evaluation (every train.eval_every steps, and the last) with the best validation metric, as "
                "early stopping does. best_val reads the validation labels, so a private method that uses it "
                "says private: false; gcn's default. The choice is kept in memory: a resumed run chooses among the "
                "evaluations it made since it resumed"),
      DPGNN_NUM("train.keep_checkpoint", train.keep_checkpoint, bool, "boolean",
                "keep checkpoint.h5 when the run finishes (it is removed by default: a finished run has nothing to "
                "resume, and model.h5 holds the result)"),
      DPGNN_NUM("train.log_train_loss", train.log_train_loss, bool, "boolean",
                "write each step's training loss to metrics.jsonl and the progress line; the loss is computed on "
                "private labels without noise, so a private run that logs it says private: false"),
      DPGNN_NUM("privacy.target_epsilon", privacy.target_epsilon, double, "number",
                "stop before a step would exceed it; > 0"),
      DPGNN_NUM("privacy.delta", privacy.delta, double, "number", "delta in (0, 1)"),
      DPGNN_OPT("privacy.noise_multiplier", privacy.noise_multiplier, double, "number",
                "sigma / sensitivity (docs/privacy.md); null = calibrate to target_epsilon over train.max_steps"),
      DPGNN_NUM("privacy.clip_norm", privacy.clip_norm, double, "number",
                "per-subgraph gradient clipping threshold C, > 0"),
      DPGNN_STR("privacy.clipping", privacy.clipping,
                "flat (one threshold C over all parameters) | per-layer (C / sqrt(L) per layer, total bound C; "
                "Daigavane et al. Sec. 6)"),
      DPGNN_OPT("privacy.noise_seed", privacy.noise_seed, std::uint64_t, "integer",
                "pins the noise and batch secrets (derived from it): reproducible, and then the run is NOT private "
                "(private: false); null = 256-bit secrets from the OS"),
      DPGNN_NUM("privacy.worst_case", privacy.worst_case, bool, "boolean",
                "account with the paper's M_min = ceil(N/(1+R*L)) instead of the realised M"),
      DPGNN_STR("privacy.conversion", privacy.conversion, "RDP to (epsilon, delta): balle | mironov"),
      DPGNN_STR("privacy.accountant", privacy.accountant,
                "pld (privacy loss distributions where a dominating pair is proven, else RDP; the smaller valid "
                "bound) | rdp (docs/privacy.md section 3a); calibration and stopping use it"),
  };
}

// Every key, in the order --help-config lists them (two tables: one would be longer than a
// function should be).
const std::vector<Field>& fields() {
  static const std::vector<Field> f = [] {
    std::vector<Field> all = general_fields();
    for (Field& x : sampler_and_dpar_fields()) all.push_back(std::move(x));
    return all;
  }();
  return f;
}

#undef DPGNN_STR
#undef DPGNN_NUM
#undef DPGNN_OPT

const Field* find_field(const std::string& key) {
  for (const auto& f : fields())
    if (f.key == key) return &f;
  return nullptr;
}

std::string known_keys_in(const std::string& section) {
  std::string out;
  for (const auto& f : fields()) {
    const auto dot = f.key.find('.');
    const std::string sec = dot == std::string::npos ? "" : f.key.substr(0, dot);
    if (sec == section) out += (out.empty() ? "" : ", ") + f.key;
  }
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The known key a misspelt one most likely meant: the same name in another section
// (train.clip_norm -> privacy.clip_norm), else the nearest by edit distance if it is close
// (at most 2 edits, or a third of the key). Empty when nothing is close.
std::string closest_key(const std::string& key) {
  const auto leaf_of = [](const std::string& k) { return k.substr(k.find('.') == std::string::npos ? 0 : k.find('.') + 1); };
  for (const auto& f : fields())
    if (f.key != key && leaf_of(f.key) == leaf_of(key) && f.key.find('.') != std::string::npos) return f.key;
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, key.size() / 3) + 1;
  for (const auto& f : fields())
    if (const std::size_t d = edit_distance(key, f.key); d < best_d) best = f.key, best_d = d;
  return best;
}

const std::vector<std::string>& section_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& f : fields())
      if (const auto dot = f.key.find('.'); dot != std::string::npos &&
                                            std::find(out.begin(), out.end(), f.key.substr(0, dot)) == out.end())
        out.push_back(f.key.substr(0, dot));
    return out;
  }();
  return names;
}

void apply(Config& c, const std::string& key, const YAML::Node& value, const std::string& file) {
  const Field* f = find_field(key);
  if (f == nullptr) {
    if (const auto& s = section_names(); std::find(s.begin(), s.end(), key) != s.end())
    {
      const std::string keys = known_keys_in(key);
      const std::string first = keys.substr(key.size() + 1, keys.find(',') - key.size() - 1);
      throw ConfigError(file, key,
                        "is a section, not a value: give its keys (" + keys + "), e.g. " + key + ": {" + first + ": ...}");
    }
    const auto dot = key.find('.');
    const std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
    const std::string known = known_keys_in(section);
    const std::string guess = closest_key(key);
    throw ConfigError(file, key,
                      "unknown key" + (guess.empty() ? std::string() : "; did you mean '" + guess + "'?") +
                          (known.empty() ? " (unknown section)" : " (known keys here: " + known + ")"));
  }
  f->set(c, value, file);
}

void walk(Config& c, const YAML::Node& node, const std::string& prefix, const std::string& file) {
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = (prefix.empty() ? "" : prefix + ".") + it->first.as<std::string>();
    const bool is_section = prefix.empty() && it->second.IsMap();
    if (is_section) {
      if (known_keys_in(key).empty()) {
        std::string guess;
        for (const auto& name : section_names())
          if (edit_distance(key, name) <= 2) guess = name;
        throw ConfigError(file, key,
                          "unknown section" + (guess.empty() ? std::string() : "; did you mean '" + guess + "'?") +
                              " (sections are data, model, train, privacy, sampler, dpar)");
      }
      walk(c, it->second, key, file);
    } else {
      apply(c, key, it->second, file);
    }
  }
}

void require(bool ok, const std::string& file, const std::string& key, const std::string& problem) {
  if (!ok) throw ConfigError(file, key, problem);
}

void validate(const Config& c) {
  const std::string& f = c.source;
  try {
    parse_method(c.method);
  } catch (const UsageError& e) {
    throw ConfigError(f, "method", e.what());
  }
  require(!c.data.dataset.empty(), f, "data.dataset", "is required (the dataset HDF5 file)");
  const bool cuda_index = c.device.size() > 5 && c.device.rfind("cuda:", 0) == 0 &&
                          c.device.find_first_not_of("0123456789", 5) == std::string::npos;
  require(c.device == "cpu" || c.device == "cuda" || cuda_index, f, "device",
          "must be cpu, cuda or cuda:N (N a device number), got '" + c.device + "'");
  require(c.model.arch == "gcn" || c.model.arch == "sage" || c.model.arch == "gin" || c.model.arch == "mlp", f,
          "model.arch", "must be gcn, sage, gin or mlp, got '" + c.model.arch + "'");
  require(c.model.layers >= 1 && c.model.layers <= 3, f, "model.layers", "must be 1, 2 or 3");
  require(c.model.hidden >= 1, f, "model.hidden", "must be >= 1");
  require(c.model.activation == "relu" || c.model.activation == "tanh", f, "model.activation", "must be relu or tanh");
  require(c.model.dropout >= 0 && c.model.dropout < 1, f, "model.dropout", "must be in [0, 1)");
  require(c.model.input_norm == "none" || c.model.input_norm == "l2", f, "model.input_norm",
          "must be none or l2, got '" + c.model.input_norm + "'");
  require(c.train.batch_size >= 0, f, "train.batch_size", "must be >= 1 (or 0 for auto)");
  require(std::isfinite(c.train.lr) && c.train.lr > 0, f, "train.lr", "must be > 0");
  require(c.train.optimizer == "adam" || c.train.optimizer == "sgd", f, "train.optimizer", "must be adam or sgd");
  require(c.train.momentum >= 0 && c.train.momentum < 1, f, "train.momentum", "must be in [0, 1)");
  require(c.train.weight_decay >= 0, f, "train.weight_decay", "must be >= 0");
  require(c.train.max_steps >= 1, f, "train.max_steps", "must be >= 1");
  require(c.train.eval_every >= 0, f, "train.eval_every", "must be >= 0");
  require(c.train.checkpoint_every >= 0, f, "train.checkpoint_every", "must be >= 0");
  require(c.train.threads >= 0, f, "train.threads", "must be >= 0");
  require(c.train.features_on_device == "auto" || c.train.features_on_device == "always" ||
              c.train.features_on_device == "never",
          f, "train.features_on_device", "must be auto, always or never, got '" + c.train.features_on_device + "'");
  require(c.train.ema >= 0 && c.train.ema < 1, f, "train.ema", "must be in [0, 1)");
  require(c.train.model_selection == "last" || c.train.model_selection == "best_val", f, "train.model_selection",
          "must be last or best_val, got '" + c.train.model_selection + "'");
  require(std::isfinite(c.privacy.target_epsilon) && c.privacy.target_epsilon > 0, f, "privacy.target_epsilon",
          "must be > 0");
  require(c.privacy.delta > 0 && c.privacy.delta < 1, f, "privacy.delta", "must be in (0, 1)");
  if (c.privacy.noise_multiplier)
    require(std::isfinite(*c.privacy.noise_multiplier) && *c.privacy.noise_multiplier > 0, f,
            "privacy.noise_multiplier", "must be > 0 (or null to calibrate it)");
  require(std::isfinite(c.privacy.clip_norm) && c.privacy.clip_norm > 0, f, "privacy.clip_norm", "must be > 0");
  require(c.privacy.clipping == "flat" || c.privacy.clipping == "per-layer", f, "privacy.clipping",
          "must be flat or per-layer");
  require(c.privacy.accountant == "pld" || c.privacy.accountant == "rdp", f, "privacy.accountant",
          "must be pld or rdp, got '" + c.privacy.accountant + "'");
  require(c.privacy.conversion == "balle" || c.privacy.conversion == "mironov", f, "privacy.conversion",
          "must be balle or mironov");
  // M_min = ceil(N / (1 + R L)) is the random-walk paper's bound (Ayle et al. 2022, Sec. 4.2) and
  // holds only for its samplers; dpgnn and dp-mlp account over the training nodes, so the
  // option would be silently ignored there (the summary would still name a worst-case accountant).
  const Method m = parse_method(c.method);
  require(!c.privacy.worst_case || uses_random_walks(m) || !is_private(m), f, "privacy.worst_case",
          "applies only to the random-walk methods drw, drw-r and drw-d (the M_min bound of Ayle et al. "
          "2022, Sec. 4.2), not to method " + c.method);
  require(c.sampler.walk_length >= 1, f, "sampler.walk_length", "must be >= 1");
  require(c.sampler.restarts >= 1, f, "sampler.restarts", "must be >= 1");
  require(c.sampler.resample_every >= 1, f, "sampler.resample_every", "must be >= 1");
  require(c.sampler.max_degree >= 1, f, "sampler.max_degree", "must be >= 1");
  require(c.sampler.degree_bound == "paper" || c.sampler.degree_bound == "require", f, "sampler.degree_bound",
          "must be paper or require");
  require(c.sampler.edges == "induced" || c.sampler.edges == "walk", f, "sampler.edges", "must be induced or walk");
  require(c.sampler.splits >= 1, f, "sampler.splits", "must be >= 1");
  const auto& d = c.dpar;
  require(d.mechanism == "gm" || d.mechanism == "em0" || d.mechanism == "em1", f, "dpar.mechanism",
          "must be gm, em0 or em1, got '" + d.mechanism + "'");
  require(std::isfinite(d.appr_fraction) && d.appr_fraction > 0 && d.appr_fraction < 1, f, "dpar.appr_fraction",
          "must be in (0, 1)");
  require(d.appr_nodes >= 0, f, "dpar.appr_nodes", "must be >= 0 (0 = no DP-APPR release)");
  require(d.appr_nodes >= 1 || d.graph_sampling_rate >= 1, f, "dpar.appr_nodes",
          "0 (no DP-APPR release) cannot be combined with dpar.graph_sampling_rate < 1 (the hidden sample is drawn "
          "with the release)");
  require(d.top_k >= 1, f, "dpar.top_k", "must be >= 1");
  require(std::isfinite(d.alpha) && d.alpha > 0 && d.alpha < 1, f, "dpar.alpha", "must be in (0, 1)");
  require(std::isfinite(d.rho) && d.rho > 0, f, "dpar.rho", "must be > 0");
  require(std::isfinite(d.tolerance) && d.tolerance > 0, f, "dpar.tolerance", "must be > 0");
  require(std::isfinite(d.gm_clip) && d.gm_clip > 0, f, "dpar.gm_clip", "must be > 0");
  require(std::isfinite(d.em_clip) && d.em_clip > 0, f, "dpar.em_clip", "must be > 0");
  require(d.propagation_steps >= 0, f, "dpar.propagation_steps", "must be >= 0");
  require(d.center_outputs == "never" || d.center_outputs == "always" || d.center_outputs == "multiclass", f,
          "dpar.center_outputs", "must be never, always or multiclass, got '" + d.center_outputs + "'");
  require(std::isfinite(d.centered_alpha) && d.centered_alpha > 0 && d.centered_alpha < 1, f, "dpar.centered_alpha",
          "must be in (0, 1)");
  require(d.centered_steps >= 0, f, "dpar.centered_steps", "must be >= 0");
  require(d.keep_class_shares == "never" || d.keep_class_shares == "binary", f, "dpar.keep_class_shares",
          "must be never or binary, got '" + d.keep_class_shares + "'");
  require(std::isfinite(d.graph_sampling_rate) && d.graph_sampling_rate > 0 && d.graph_sampling_rate <= 1, f,
          "dpar.graph_sampling_rate", "must be in (0, 1]");
  require(std::isfinite(d.label_fraction) && d.label_fraction >= 0 && d.label_fraction < 1, f, "dpar.label_fraction",
          "must be in [0, 1)");
  require((d.appr_nodes >= 1 ? d.appr_fraction : 0.0) + d.label_fraction < 1, f, "dpar.label_fraction",
          "plus dpar.appr_fraction must be < 1 (DP-SGD needs a share of the budget)");
  require(std::isfinite(d.label_min_epsilon) && d.label_min_epsilon >= 0, f, "dpar.label_min_epsilon", "must be >= 0");
  require(d.learner == "sgd" || d.learner == "class_sums" || d.learner == "auto", f, "dpar.learner",
          "must be sgd, class_sums or auto, got '" + d.learner + "'");
  require(std::isfinite(d.class_sums_below) && d.class_sums_below >= 0, f, "dpar.class_sums_below", "must be >= 0");
  require(d.learner != "class_sums" || d.appr_nodes == 0, f, "dpar.learner",
          "class_sums needs dpar.appr_nodes: 0 (the class sums are over each node's own features; DP-APPR's "
          "aggregated examples are for DP-SGD)");
  require(d.learner != "class_sums" || (c.model.layers == 1 && !c.model.bias), f, "dpar.learner",
          "class_sums makes the weights of a linear model without bias: it needs model.layers: 1 and model.bias: "
          "false");
  require(d.learner != "class_sums" || !c.privacy.noise_multiplier, f, "dpar.learner",
          "class_sums is calibrated to privacy.target_epsilon (it has no steps); unset privacy.noise_multiplier");
  require(d.label_fraction == 0 || d.graph_sampling_rate >= 1, f, "dpar.label_fraction",
          "cannot be combined with dpar.graph_sampling_rate < 1 (the labels of every training node would be "
          "released, outside the hidden sample that amplifies the epsilon)");
}

// The method named by the file or the last --set method=..., for the method defaults.
std::string named_method(const YAML::Node& root, const std::vector<std::string>& overrides) {
  std::string m = Config{}.method;
  if (root.IsMap() && root["method"] && root["method"].IsScalar()) m = root["method"].Scalar();
  for (const auto& o : overrides)
    if (o.rfind("method=", 0) == 0) m = o.substr(7);
  return m;
}

}  // namespace

std::string describe_method_defaults(bool markdown) {
  std::string out = markdown ? "| method | defaults that differ from the table |\n|---|---|\n" : "";
  std::vector<std::string> names = method_names();
  std::sort(names.begin(), names.end());
  for (const auto& method : names) {
    const auto keys = method_defaults_of(method);
    if (keys.empty()) continue;
    std::string list;
    const std::string quote = markdown ? "`" : "";
    for (const auto& [k, v] : keys) list += (list.empty() ? "" : ", ") + (quote + k + ": " + v + quote);
    out += markdown ? "| `" + method + "` | " + list + " |\n" : "  " + method + ": " + list + "\n";
  }
  return out;
}

Config parse_config(const std::string& yaml_text, const std::string& source,
                    const std::vector<std::string>& overrides) {
  Config c;
  c.source = source;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    // file:line:column, as compilers say it (yaml-cpp's marks count from 0).
    throw UsageError(source + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                     ": not valid YAML: " + e.msg);
  }
  if (!root.IsNull() && !root.IsMap())
    throw ConfigError(source, "(top level)", "must be a mapping of sections and keys");
  for (const auto& [key, value] : method_defaults_of(named_method(root, overrides)))
    apply(c, key, YAML::Load(value), "(method defaults)");
  if (!root.IsNull()) walk(c, root, "", source);
  std::map<std::string, std::string> set_by;  // key -> the --set that gave its value
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--set " + o, o, "expected key=value (e.g. --set train.lr=0.1)");
    const std::string key = o.substr(0, eq);
    YAML::Node value;
    try {
      value = YAML::Load(o.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      throw ConfigError("--set " + o, key, "value is not valid YAML: " + e.msg);
    }
    apply(c, key, value, "--set " + o);
    set_by[key] = o;
  }
  try {
    validate(c);
  } catch (const ConfigError& e) {
    // A value that --set gave is blamed on the --set, not on the file.
    const auto it = set_by.find(e.key());
    if (it != set_by.end() && e.file() == source) throw ConfigError("--set " + it->second, e.key(), e.problem());
    throw;
  }
  return c;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  YAML::Node probe;
  std::string text;
  {
    std::ifstream in(path);
    if (!in) throw IoError(path + ": cannot read the config file");
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  return parse_config(text, path, overrides);
}

void resolve_data_paths(Config& c) {
  for (std::string* path : {&c.data.dataset, &c.data.partition})
    if (!path->empty()) *path = std::filesystem::absolute(*path).lexically_normal().string();
}

std::string dump_config(const Config& c) {
  YAML::Node root(YAML::NodeType::Map);
  for (const auto& f : fields()) {
    const auto dot = f.key.find('.');
    if (dot == std::string::npos)
      root[f.key] = f.get(c);
    else
      root[f.key.substr(0, dot)][f.key.substr(dot + 1)] = f.get(c);
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

std::string describe_config_keys(bool markdown) {
  if (!markdown) {
    // Plain text, like --help: the key, its type and default, the description indented below.
    std::string out;
    for (const auto& f : fields())
      out += f.key + " (" + f.type + ", default " + (f.default_text.empty() ? "\"\"" : f.default_text) + ")\n      " +
             f.description + "\n";
    return out;
  }
  std::string out = "| key | type | default | description |\n|---|---|---|---|\n";
  for (const auto& f : fields()) {
    std::string desc;  // a '|' would end the Markdown cell
    for (char ch : f.description) desc += ch == '|' ? std::string("\\|") : std::string(1, ch);
    out += "| `" + f.key + "` | " + f.type + " | `" + (f.default_text.empty() ? "\"\"" : f.default_text) + "` | " +
           desc + " |\n";
  }
  return out;
}

}  // namespace dpgnn::train
