#include "dpgnn/train/ledger.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "dpgnn/util/error.h"

namespace dpgnn::train {

namespace {

// The fields both writer and reader insist on (a line read_ledger would refuse is never
// written).
void check_entry(const LedgerEntry& e) {
  if (e.release.empty()) throw std::invalid_argument("ledger: the release name must not be empty");
  if (e.is_sgd() && e.count != 1)
    throw std::invalid_argument("ledger: an sgd line records exactly one step, got count " +
                                std::to_string(e.count));
  if ((e.release == kGraphSampleRelease) != e.subsample.has_value())
    throw std::invalid_argument(std::string("ledger: the subsample belongs on the '") + kGraphSampleRelease +
                                "' line, and only there");
  if (!e.is_sgd() && e.count < 1)
    throw std::invalid_argument("ledger: release '" + e.release + "' needs count >= 1, got " +
                                std::to_string(e.count));
}

}  // namespace

LedgerWriter::LedgerWriter(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "a");
  if (file_ == nullptr) throw IoError(path + ": cannot open the privacy ledger for appending: " + std::strerror(errno));
}

LedgerWriter::~LedgerWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void LedgerWriter::append(const LedgerEntry& e) {
  check_entry(e);
  const auto& m = e.mechanism;
  nlohmann::json j;
  if (e.subsample) {
    j = {{"release", e.release},
         {"subsample", e.subsample->to_string()},
         {"rate", e.subsample->rate()},
         {"count", e.count},
         {"epsilon", e.epsilon}};
  } else if (e.is_sgd()) {
    j = {{"step", e.step},
         {"mechanism", m.to_string()},
         {"scheme", privacy::scheme_name(m.scheme)},
         {"sampling_rate", m.sampling_rate},
         {"noise_multiplier", m.noise_multiplier},
         {"subgraphs", m.dataset_size},
         {"batch_size", m.batch_size},
         {"epsilon", e.epsilon}};
  } else {
    j = {{"release", e.release},
         {"mechanism", m.to_string()},
         {"count", e.count},
         {"scheme", privacy::scheme_name(m.scheme)},
         {"noise_multiplier", m.noise_multiplier},
         {"epsilon", e.epsilon}};
  }
  const std::string line = j.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0 ||
      ::fsync(::fileno(file_)) != 0)
    throw IoError(path_ + ": cannot write the privacy ledger: " + std::strerror(errno));
}

std::vector<LedgerEntry> read_ledger(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError(path + ": cannot read the privacy ledger");
  std::vector<LedgerEntry> out;
  std::string line;
  std::int64_t lineno = 0;
  std::int64_t sgd = 0;  // sgd lines read so far = the step the next sgd line must carry
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(lineno);
    LedgerEntry e;
    try {
      const auto j = nlohmann::json::parse(line);
      e.release = j.contains("release") ? j.at("release").get<std::string>() : kSgdRelease;
      e.count = j.contains("count") ? j.at("count").get<std::int64_t>() : 1;
      if (e.is_sgd()) {
        e.step = j.at("step").get<std::int64_t>();
      } else if (j.contains("step")) {
        throw std::invalid_argument("release '" + e.release + "' carries a step");
      }
      if (e.release == kGraphSampleRelease)
        e.subsample = privacy::Subsample::parse(j.at("subsample").get<std::string>());
      else
        e.mechanism = privacy::Mechanism::parse(j.at("mechanism").get<std::string>());
      e.epsilon = j.at("epsilon").get<double>();
      check_entry(e);
    } catch (const std::exception& ex) {
      throw DataError(path, where,
                      std::string("malformed ledger entry (") + ex.what() +
                          "); the ledger is append-only and must not be edited");
    }
    if (e.subsample && !out.empty())
      throw DataError(path, where, std::string("the '") + kGraphSampleRelease + "' line must be the ledger's first");
    if (e.is_sgd()) {
      if (e.step != sgd)
        throw DataError(path, where,
                        "step " + std::to_string(e.step) + " where step " + std::to_string(sgd) + " was expected");
      ++sgd;
    } else if (sgd > 0) {
      throw DataError(path, where,
                      "release '" + e.release + "' after training step " + std::to_string(sgd - 1) +
                          ": pre-training releases must all come before the first training step");
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::int64_t sgd_steps(const std::vector<LedgerEntry>& entries) {
  std::int64_t n = 0;
  for (const auto& e : entries)
    if (e.is_sgd()) n += e.count;
  return n;
}

privacy::Accountant accountant_from_ledger(const std::vector<LedgerEntry>& entries,
                                           privacy::Conversion conversion, std::vector<double> orders) {
  privacy::Accountant acc(std::move(orders), conversion);
  for (const auto& e : entries) {
    if (e.subsample)
      acc.set_subsample(*e.subsample);
    else
      acc.step(e.mechanism, e.count);
  }
  return acc;
}

}  // namespace dpgnn::train
