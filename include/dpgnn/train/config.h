// The training configuration: one struct per YAML section, each field with its default,
// description and constraint together (the table in config.cpp is the single source;
// `dpgnn train --help-config` and docs/configs.md print it). Unknown keys, wrong types and
// out-of-range values are ConfigErrors naming the file and the key, raised before any
// rank does work.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dpgnn::train {

// The methods. What each one is (private or not, its sampler and accountant, its defaults)
// lives in its own file under src/train/methods/ and the registry there (method.h); these
// functions read the registry.
enum class Method { kDrw, kDrwR, kDrwD, kDpGnn, kDpMlp, kGcn, kMlp, kSplit, kDpar };
Method parse_method(const std::string& name);  // UsageError listing the methods for an unknown name
std::string method_name(Method m);
std::vector<std::string> method_names();       // every registered method
bool is_private(Method m);          // the method adds noise and accounts (drw, ..., dpar)
bool uses_random_walks(Method m);   // drw, drw-r, drw-d, gcn (same sampler and batch as drw)
// The accountant a method is paired with (DESIGN.md 3), as summaries and `train --check` name it.
std::string accountant_name(Method m, bool worst_case);
// The defaults that replace the config table's for `method` (none for an unknown name).
std::vector<std::pair<std::string, std::string>> method_defaults_of(const std::string& method);

struct DataSection {
  std::string dataset;    // dataset HDF5 file (required)
  std::string partition;  // partition file from `dpgnn partition`; empty = one part
  // The `dpgnn import ...` / `dpgnn partition ...` commands (without "dpgnn") that make the
  // two files, run by `dpgnn prepare --config` (cli/cmd_prepare.cpp); not used by training.
  std::vector<std::string> prepare;
};

struct ModelSection {
  std::string arch = "gcn";  // gcn | sage | gin | mlp (mlp and dp-mlp force mlp)
  int layers = 2;
  int hidden = 256;
  std::string activation = "relu";
  double dropout = 0.0;
  std::string input_norm = "none";  // none | l2: row-normalise each node's features (train/feature_norm.h)
  bool bias = true;                 // false: no bias in the linear maps (mlp architecture only)
};

struct TrainSection {
  std::int64_t batch_size = 0;  // m; 0 = auto: the method's (MethodSpec::auto_batch_size)
  double lr = 0.01;
  std::string optimizer = "adam";
  double momentum = 0.0;
  double weight_decay = 0.0;
  std::int64_t max_steps = 1000;
  std::uint64_t seed = 0;
  std::int64_t eval_every = 100;        // 0 = only at the end
  std::int64_t checkpoint_every = 100;  // 0 = only at the end
  int threads = 0;                      // compute threads per rank; 0 = cores / local ranks
  std::string features_on_device = "auto";  // auto | always | never (train/feature_store.h)
  double ema = 0.0;                     // decay of the parameter average used for evaluation; 0 = off
  // last | best_val: the model saved is the last one, or the one of the evaluation with the best
  // validation metric (reads the validation labels: outside the privacy guarantee)
  std::string model_selection = "last";
  bool log_train_loss = false;          // release the batch loss (private labels, no noise): not private
  bool keep_checkpoint = false;         // keep checkpoint.h5 after the run finishes
};

struct PrivacySection {
  double target_epsilon = 8.0;
  double delta = 1e-5;
  std::optional<double> noise_multiplier;  // absent = calibrate to target_epsilon over max_steps
  double clip_norm = 1.0;
  std::string clipping = "flat";  // flat | per-layer (C_l = C / sqrt(L): same total bound C)
  std::optional<std::uint64_t> noise_seed;  // absent = OS secure randomness
  bool worst_case = false;                  // account with M_min (random-walk paper, Sec. 4.2)
  std::string conversion = "balle";         // balle | mironov
  std::string accountant = "pld";           // pld | rdp (pld falls back to rdp where no pair is proven)
};

struct SamplerSection {
  int walk_length = 4;           // L
  int restarts = 4;              // R (drw-r)
  std::int64_t resample_every = 100;  // i (drw-d)
  int max_degree = 3;            // K (dpgnn)
  std::string degree_bound = "paper";  // paper | require (dpgnn; sampling/sampler.h DegreeBound)
  std::string edges = "induced";  // induced | walk: which edges a random-walk subgraph keeps
  std::int64_t splits = 10;      // s (split): random disjoint groups of the training nodes
};

// DPAR (Zhang et al., "DPAR: Decoupled Graph Neural Networks with Node-Level Differential
// Privacy"): DP-APPR of `appr_nodes` training nodes, then DP-SGD on the decoupled model;
// defaults are the paper's Sec. 4 settings (docs/configs.md).
struct DparSection {
  std::string mechanism = "em0";     // gm | em0 | em1 (Algorithm 3 / Algorithm 1 options I, II)
  double appr_fraction = 0.5;        // share of the target epsilon given to DP-APPR (paper: half)
  std::int64_t appr_nodes = 70;      // M: training nodes that get a DP-APPR vector (Sec. 4: 70)
  int top_k = 2;                     // K non-zero entries per DP-APPR vector
  double alpha = 0.25;               // teleport probability of APPR and of inference
  double rho = 1e-4;                 // l1 regularisation of ISTA
  double tolerance = 1e-4;           // ISTA stopping tolerance (the paper's gamma)
  double gm_clip = 0.01;             // C1: l2 clip of a vector (gm)
  double em_clip = 0.001;            // C2: clip of each entry (em0, em1)
  int propagation_steps = 2;         // P power-iteration steps at inference (Sec. 4, Eq. 4)
  // q': the run (release and DP-SGD) sees only a hidden uniform sample of round(q' U) of the
  // U training nodes, and its epsilon is amplified by it (Sec. 3.2; paper: 0.09). 1 = off.
  double graph_sampling_rate = 1.0;
  // The training labels released by k-ary randomized response (methods/dpar_labels.h) with
  // this share of the target epsilon, and used at inference as evidence beside the model's
  // prediction; 0 = no release. Made only when its share is at least label_min_epsilon: below
  // that the released labels are mostly noise and the whole budget is better spent on DP-SGD.
  double label_fraction = 0.0;
  double label_min_epsilon = 3.0;
  // With released labels: choose the inference steps among 1, 2, 4, 8 on them (Evaluator).
  bool choose_steps = true;
  // Centre the model's outputs over all nodes before the inference propagation, and then
  // propagate with centered_alpha and centered_steps instead of alpha and propagation_steps:
  // never | always | multiclass (single-label datasets with 3 or more classes, and no label
  // release: the released labels bring the class prior back). The noise of
  // DP-SGD puts an offset on every class's outputs that the propagation cannot average away
  // (the features are non-negative, so every node shares their mean direction); centring
  // removes it, and with it the class prior, which with two classes is most of what a weakly
  // informed model knows (docs/results.md, "Issue 37: centred outputs").
  std::string center_outputs = "never";
  double centered_alpha = 0.1;
  int centered_steps = 8;
  // After the inference propagation, keep the model's class shares: a per-class offset makes
  // the mean predicted probabilities over all nodes equal the model's before the propagation:
  // never | binary (single-label datasets with two classes, and no label release). The
  // propagation of a weak model's logits moves its shares (on Twitch-DE at epsilon 1 it put
  // too many nodes in the majority class; docs/results.md, "Issue 37: class shares kept").
  std::string keep_class_shares = "never";
  // How f_theta is learnt: sgd (DP-SGD, Algorithm 2) | class_sums (not in the paper: ONE Gaussian
  // release of the per-class sums of the training nodes' l2-clipped non-negative feature parts,
  // which are the weights of the linear model; no steps; methods/dpar_class_sums.h) | auto
  // (class_sums on single-label data with 3 or more classes, without DP-APPR or the label
  // release, when training nodes x target_epsilon < class_sums_below; else sgd).
  // At small budgets on small graphs DP-SGD's noise dominates and the sufficient statistic
  // released once does better (docs/results.md, "Issue 37: the class sums").
  std::string learner = "sgd";
  double class_sums_below = 3000.0;
};

struct Config {
  std::string method = "drw";
  DataSection data;
  ModelSection model;
  TrainSection train;
  PrivacySection privacy;
  SamplerSection sampler;
  DparSection dpar;
  std::string device = "cpu";  // cpu | cuda | cuda:N
  std::string source;          // the file it was read from (for messages)

  Method method_enum() const { return parse_method(method); }
};

// Reads `path`, applies `overrides` ("key=value", dotted keys, YAML scalar values) and
// validates. Throws ConfigError naming the file and the key.
Config load_config(const std::string& path, const std::vector<std::string>& overrides);
// Parses YAML text (for tests).
Config parse_config(const std::string& yaml_text, const std::string& source,
                    const std::vector<std::string>& overrides);
// Makes data.dataset and data.partition absolute (against the current directory, lexically
// normal; empty stays empty): what a run records.
void resolve_data_paths(Config& config);
// The resolved configuration as YAML (every key, defaults included).
std::string dump_config(const Config& config);
// Every key with its type, default and description: plain text (--help-config), or a
// Markdown table (--help-config --markdown, docs/configs.md).
std::string describe_config_keys(bool markdown = false);
// The defaults that depend on the method (replacing the table's for that method), plain
// text or a Markdown table.
std::string describe_method_defaults(bool markdown = false);
// The sampler and accountant a config's method is paired with (DESIGN.md 3), one phrase.
std::string method_pairing(const Config& config);

// Whether a run of this config is covered by the privacy guarantee (summary.json "private"):
// false for a non-private method and whenever any part of the run is outside it (a pinned
// noise seed, a released training loss, a method's own reason such as DP-GNN's `paper`
// degree bound). The one place train, predict and audit decide it (methods/method.cpp).
bool run_is_private(const Config& config);
// The reasons run_is_private is false, one phrase each (empty when it is true).
std::vector<std::string> reasons_not_private(const Config& config);

// The GPU a validated config pins: N for "cuda:N"; -1 for "cuda" (by local rank) and "cpu".
int cuda_device_index(const Config& config);

}  // namespace dpgnn::train
