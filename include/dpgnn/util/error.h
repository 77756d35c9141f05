// Typed errors and the process exit codes they map to.
//
// Every user mistake is reported by a typed exception whose message names the file, the
// key or dataset path, and what was expected (style of mt-KaHyPar's
// InvalidInputException). `main` catches them, prints one line and exits with the code
// below; nothing is reported by crashing. The codes are documented in docs/cli.md.
#pragma once

#include <stdexcept>
#include <string>

namespace dpgnn {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,  // a bug: an unexpected exception
  kExitUsage = 2,     // bad command-line argument, config key or parameter value
  kExitData = 3,      // an input file is malformed or inconsistent (dataset, partition, ...)
  kExitIo = 4,        // cannot read/write a file, or a system/MPI/NCCL call failed
};

class Error : public std::runtime_error {
 public:
  Error(const std::string& what, int exit_code) : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// A command-line argument, config key or parameter is invalid.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what, kExitUsage) {}
};

// A config file is invalid: names the file and the key.
class ConfigError : public UsageError {
 public:
  ConfigError(const std::string& file, const std::string& key, const std::string& problem)
      : UsageError(file + ": key '" + key + "': " + problem), file_(file), key_(key), problem_(problem) {}
  const std::string& file() const { return file_; }
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_, key_, problem_;
};

// An input data file is malformed: names the file, the path inside it and the problem.
class DataError : public Error {
 public:
  DataError(const std::string& file, const std::string& where, const std::string& problem)
      : Error(file + (where.empty() ? "" : ": " + where) + ": " + problem, kExitData) {}
  explicit DataError(const std::string& what) : Error(what, kExitData) {}
};

// A file cannot be opened/written, or a system or library call failed.
class IoError : public Error {
 public:
  explicit IoError(const std::string& what) : Error(what, kExitIo) {}
};

// An error every rank raises at the same point because it follows from identical data (a
// config value, the global number of subgraphs): the job can shut MPI down cleanly instead
// of aborting, and only one rank needs to print it (`report`).
class CollectiveError : public Error {
 public:
  CollectiveError(const std::string& what, int exit_code, bool report)
      : Error(what, exit_code), report_(report) {}
  bool report() const { return report_; }

 private:
  bool report_;
};

}  // namespace dpgnn
