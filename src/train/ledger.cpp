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

// What the ledger at `path` calls the step of index 0: 1 under a format-3 (or later) header,
// 0 under a format-2 header or without one (format 1, or a file not written yet).
std::int64_t first_step_number(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line.empty()) return 0;
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("ledger") || !j.contains("version") ||
      !j.at("version").is_number_integer())
    return 0;
  return j.at("version").get<int>() >= 3 ? 1 : 0;
}

LedgerWriter::LedgerWriter(const std::string& path) : path_(path), first_step_number_(first_step_number(path)) {
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
    j = {{"step", e.step + first_step_number_},
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
  write_line(j);
}

void LedgerWriter::append_header(const nlohmann::json& binding) {
  write_line({{"ledger", "dpgnn"}, {"version", kLedgerFormat}, {"binding", binding}});
  first_step_number_ = 1;
}

void LedgerWriter::append_release(const ReleaseRecord& r) {
  if (r.name.empty() || r.name == kSgdRelease || r.name == kGraphSampleRelease)
    throw std::invalid_argument("ledger: a release record needs its own name, got '" + r.name + "'");
  if (r.events.empty()) throw std::invalid_argument("ledger: release '" + r.name + "' has no events");
  nlohmann::json events = nlohmann::json::array();
  for (const auto& e : r.events) {
    if (e.count < 1) throw std::invalid_argument("ledger: release '" + r.name + "' needs counts >= 1");
    events.push_back({{"mechanism", e.mechanism.to_string()}, {"count", e.count}});
  }
  nlohmann::json j = {{"release", r.name}, {"events", events}, {"file", r.file}, {"digest", r.digest},
                      {"key", r.key_fingerprint}, {"epsilon", r.epsilon}};
  if (r.subsample) j["subsample"] = r.subsample->to_string();
  write_line(j);
}

void LedgerWriter::append_segment(const nlohmann::json& segment) { write_line({{"resume", segment}}); }

void LedgerWriter::append_end(const nlohmann::json& end) { write_line({{"end", end}}); }

void LedgerWriter::write_line(const nlohmann::json& j) {
  const std::string line = j.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0 ||
      ::fsync(::fileno(file_)) != 0)
    throw IoError(path_ + ": cannot write the privacy ledger: " + std::strerror(errno));
}

namespace {

// Reads one format-2 release record into `out` (entries expanded) or throws.
ReleaseRecord parse_release_record(const nlohmann::json& j) {
  ReleaseRecord r;
  r.name = j.at("release").get<std::string>();
  if (r.name == kSgdRelease || r.name == kGraphSampleRelease)
    throw std::invalid_argument("a release record cannot be named '" + r.name + "'");
  for (const auto& e : j.at("events")) {
    privacy::AccountantEvent ev{privacy::Mechanism::parse(e.at("mechanism").get<std::string>()),
                                e.at("count").get<std::int64_t>()};
    if (ev.count < 1) throw std::invalid_argument("event count must be >= 1");
    r.events.push_back(ev);
  }
  if (r.events.empty()) throw std::invalid_argument("release record without events");
  if (j.contains("subsample")) r.subsample = privacy::Subsample::parse(j.at("subsample").get<std::string>());
  r.file = j.at("file").get<std::string>();
  r.digest = j.at("digest").get<std::string>();
  r.key_fingerprint = j.at("key").get<std::string>();
  r.epsilon = j.at("epsilon").get<double>();
  if (r.file.empty() || r.digest.rfind("blake2b:", 0) != 0)
    throw std::invalid_argument("release record needs a file and a blake2b digest");
  return r;
}

// A format-1 line (an sgd step, a release event, the graph sample); the file numbers the
// step of index 0 `first_step_number`.
LedgerEntry parse_entry(const nlohmann::json& j, std::int64_t first_step_number) {
  LedgerEntry e;
  e.release = j.contains("release") ? j.at("release").get<std::string>() : kSgdRelease;
  e.count = j.contains("count") ? j.at("count").get<std::int64_t>() : 1;
  if (e.is_sgd()) {
    e.step = j.at("step").get<std::int64_t>() - first_step_number;
  } else if (j.contains("step")) {
    throw std::invalid_argument("release '" + e.release + "' carries a step");
  }
  if (e.release == kGraphSampleRelease)
    e.subsample = privacy::Subsample::parse(j.at("subsample").get<std::string>());
  else
    e.mechanism = privacy::Mechanism::parse(j.at("mechanism").get<std::string>());
  e.epsilon = j.at("epsilon").get<double>();
  check_entry(e);
  return e;
}

}  // namespace

Ledger read_ledger_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError(path + ": cannot read the privacy ledger");
  Ledger out;
  std::string line;
  std::int64_t lineno = 0;
  std::int64_t sgd = 0;  // sgd lines read so far = the step the next sgd line must carry
  bool any = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(lineno);
    if (out.end) throw DataError(path, where, "a line after the run's end record");
    nlohmann::json j;
    std::vector<LedgerEntry> expanded;
    try {
      j = nlohmann::json::parse(line);
      if (j.contains("ledger")) {
        if (any) throw std::invalid_argument("the header must be the ledger's first line");
        const int version = j.at("version").get<int>();
        if (version != 2 && version != kLedgerFormat)
          throw std::invalid_argument("unknown ledger format version " + j.at("version").dump());
        out.format = version;
        out.binding = j.at("binding");
      } else if (j.contains("resume")) {
        if (!out.binding) throw std::invalid_argument("a resume segment in a ledger without a header");
        const auto& seg = j.at("resume");
        if (seg.at("after_step").get<std::int64_t>() != sgd)
          throw std::invalid_argument("resume segment after step " + seg.at("after_step").dump() + " where " +
                                      std::to_string(sgd) + " steps are recorded");
        out.segments.push_back(seg);
      } else if (j.contains("end")) {
        if (!out.binding) throw std::invalid_argument("an end record in a ledger without a header");
        out.end = j.at("end");
      } else if (j.contains("events")) {
        if (!out.binding) throw std::invalid_argument("a release record in a ledger without a header");
        ReleaseRecord r = parse_release_record(j);
        if (r.subsample) {
          LedgerEntry g;
          g.release = kGraphSampleRelease;
          g.subsample = r.subsample;
          g.epsilon = 0.0;
          expanded.push_back(g);
        }
        for (const auto& ev : r.events) {
          LedgerEntry e;
          e.release = r.name;
          e.mechanism = ev.mechanism;
          e.count = ev.count;
          e.epsilon = r.epsilon;
          expanded.push_back(e);
        }
        out.releases.push_back(std::move(r));
      } else {
        expanded.push_back(parse_entry(j, out.format >= 3 ? 1 : 0));
      }
    } catch (const std::exception& ex) {
      throw DataError(path, where,
                      std::string("malformed ledger entry (") + ex.what() +
                          "); the ledger is append-only and must not be edited");
    }
    any = true;
    for (auto& e : expanded) {
      if (e.subsample && !out.entries.empty())
        throw DataError(path, where, std::string("the '") + kGraphSampleRelease + "' line must be the ledger's first");
      if (e.is_sgd()) {
        if (e.step != sgd) {
          const std::int64_t base = out.format >= 3 ? 1 : 0;  // as the file numbers them
          throw DataError(path, where,
                          "step " + std::to_string(e.step + base) + " where step " + std::to_string(sgd + base) +
                              " was expected");
        }
        ++sgd;
      } else if (sgd > 0) {
        throw DataError(path, where,
                        "release '" + e.release + "' after training step " +
                            std::to_string(sgd - 1 + (out.format >= 3 ? 1 : 0)) +
                            ": pre-training releases must all come before the first training step");
      }
      out.entries.push_back(std::move(e));
    }
  }
  return out;
}

std::vector<LedgerEntry> read_ledger(const std::string& path) { return read_ledger_file(path).entries; }

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
