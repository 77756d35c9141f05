#include "dpgnn/train/ledger.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dpgnn/util/error.h"

namespace dpgnn::train {

LedgerWriter::LedgerWriter(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "a");
  if (file_ == nullptr) throw IoError(path + ": cannot open the privacy ledger for appending: " + std::strerror(errno));
}

LedgerWriter::~LedgerWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void LedgerWriter::append(const LedgerEntry& e) {
  const auto& m = e.mechanism;
  nlohmann::json j = {{"step", e.step},
                      {"mechanism", m.to_string()},
                      {"scheme", privacy::scheme_name(m.scheme)},
                      {"sampling_rate", m.sampling_rate},
                      {"noise_multiplier", m.noise_multiplier},
                      {"subgraphs", m.dataset_size},
                      {"batch_size", m.batch_size},
                      {"epsilon", e.epsilon}};
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
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    try {
      const auto j = nlohmann::json::parse(line);
      LedgerEntry e;
      e.step = j.at("step").get<std::int64_t>();
      e.mechanism = privacy::Mechanism::parse(j.at("mechanism").get<std::string>());
      e.epsilon = j.at("epsilon").get<double>();
      out.push_back(e);
    } catch (const std::exception& ex) {
      throw DataError(path, "line " + std::to_string(lineno),
                      std::string("malformed ledger entry (") + ex.what() +
                          "); the ledger is append-only and must not be edited");
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].step != static_cast<std::int64_t>(i))
      throw DataError(path, "line " + std::to_string(i + 1),
                      "step " + std::to_string(out[i].step) + " where step " + std::to_string(i) + " was expected");
  return out;
}

privacy::Accountant accountant_from_ledger(const std::vector<LedgerEntry>& entries,
                                           privacy::Conversion conversion) {
  privacy::Accountant acc({}, conversion);
  for (const auto& e : entries) acc.step(e.mechanism);
  return acc;
}

}  // namespace dpgnn::train
