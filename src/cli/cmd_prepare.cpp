// `dpgnn prepare --config C [--set K=V ...] [--force]`: makes the data files a config needs by
// running its `data.prepare` commands (`import ...`, `partition ...`, `synth ...`, each a
// dpgnn subcommand line), in order, with this same binary. A command whose --out file exists
// and verifies (every array against its checksums; a partition also against the dataset it
// names) is skipped, so running it again is cheap and never remakes good files; --force
// remakes them. Relative paths are relative to the current directory, as for `dpgnn train`.
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "dpgnn/graph/dataset.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/train/config.h"
#include "dpgnn/util/error.h"

namespace dpgnn::cli {
namespace {

namespace fs = std::filesystem;

// Splits a command line into words: blanks separate, '...' and "..." quote (no escapes
// inside single quotes, \" and \\ inside double quotes), as a POSIX shell would for these.
std::vector<std::string> split_words(const std::string& line, const std::string& where) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word), word.clear(), in_word = false;
    } else if (c == '\'' || c == '"') {
      const std::size_t end = line.find(c, i + 1);
      if (end == std::string::npos) throw UsageError(where + ": unbalanced " + std::string(1, c) + " in '" + line + "'");
      for (std::size_t k = i + 1; k < end; ++k) {
        if (c == '"' && line[k] == '\\' && k + 1 < end) ++k;
        word += line[k];
      }
      i = end;
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// The value after `flag`, or "" when absent.
std::string option_value(const std::vector<std::string>& words, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i)
    if (words[i] == flag) return words[i + 1];
  return "";
}

// Whether `out` (made by the command `words`) exists and verifies; the reason when not.
bool up_to_date(const std::vector<std::string>& words, const std::string& out, std::string& why) {
  if (!fs::exists(out)) {
    why = "missing";
    return false;
  }
  try {
    graph::DatasetReader(out).verify_all();
    if (words[0] == "partition") {
      const auto pf = partition::PartitionFile::open(out);
      pf.new_to_old();
      pf.check_matches_dataset(option_value(words, "--dataset"));
      const std::string parts = option_value(words, "--parts");
      if (!parts.empty() && std::to_string(pf.num_parts()) != parts) {
        why = "it has " + std::to_string(pf.num_parts()) + " parts, the command asks for " + parts;
        return false;
      }
    }
  } catch (const Error& e) {
    why = std::string("it does not verify: ") + e.what();
    return false;
  }
  return true;
}

// Runs this binary with `words` as its arguments; its exit code (128 + signal if killed).
int run_self(const std::vector<std::string>& words) {
  std::vector<char*> argv;
  std::string self = "dpgnn";
  argv.push_back(self.data());
  std::vector<std::string> copy = words;
  for (auto& w : copy) argv.push_back(w.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw IoError(std::string("prepare: cannot start a process: ") + std::strerror(errno));
  if (pid == 0) {
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw IoError(std::string("prepare: waitpid failed: ") + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

void add_prepare_command(CLI::App& root, Registry& registry) {
  struct Options {
    std::string config;
    std::vector<std::string> overrides;
    bool force = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "prepare", "Make the data files a config needs: run its data.prepare commands (import, partition), "
                 "skipping files that exist and verify");
  app->add_option("--config", opt->config, "The config (YAML) whose data.prepare to run")->required();
  app->add_option("--set", opt->overrides, "Override a key, e.g. --set data.dataset=other.h5 (repeatable)");
  app->add_flag("--force", opt->force, "Remake every file, also those that exist and verify");
  registry.add(app, [opt]() {
    const train::Config cfg = train::load_config(opt->config, opt->overrides);
    if (cfg.data.prepare.empty())
      throw ConfigError(opt->config, "data.prepare",
                        "is empty: nothing to run (list the `dpgnn import ...` / `dpgnn partition ...` commands "
                        "that make " + cfg.data.dataset + (cfg.data.partition.empty() ? "" : " and " + cfg.data.partition) +
                            ", without \"dpgnn\")");
    const std::size_t n = cfg.data.prepare.size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::string where = opt->config + ": data.prepare[" + std::to_string(i) + "]";
      const std::string& line = cfg.data.prepare[i];
      if (line.find("SRC/") != std::string::npos)
        throw UsageError(where + ": '" + line + "' names SRC/, a placeholder for the dataset's downloaded folder (see the "
                                 "config's header): download it and replace SRC, or set data.prepare with --set");
      std::vector<std::string> words = split_words(line, where);
      if (!words.empty() && words[0] == "dpgnn") words.erase(words.begin());
      if (words.empty() || (words[0] != "import" && words[0] != "partition" && words[0] != "synth"))
        throw UsageError(where + ": '" + line + "' is not an import, partition or synth command");
      const std::string out = option_value(words, "--out");
      if (out.empty()) throw UsageError(where + ": '" + line + "' has no --out FILE");
      std::string why;
      if (!opt->force && up_to_date(words, out, why)) {
        spdlog::info("prepare [{}/{}] {}: exists and verifies, kept", i + 1, n, out);
        continue;
      }
      if (opt->force && fs::exists(out)) why = "--force";
      spdlog::info("prepare [{}/{}] {} ({}): dpgnn {}", i + 1, n, out, why, line);
      if (fs::exists(out) && std::find(words.begin(), words.end(), "--force") == words.end()) words.push_back("--force");
      if (const auto parent = fs::path(out).parent_path(); !parent.empty()) fs::create_directories(parent);
      const int code = run_self(words);
      if (code != 0)
        throw Error(where + ": 'dpgnn " + line + "' failed with exit code " + std::to_string(code) +
                        " (its message is above)",
                    code >= 2 && code <= 4 ? code : kExitInternal);
    }
    spdlog::info("prepare: {} and {} are ready for {}", cfg.data.dataset,
                 cfg.data.partition.empty() ? std::string("no partition") : cfg.data.partition, opt->config);
    return 0;
  });
}

}  // namespace dpgnn::cli
