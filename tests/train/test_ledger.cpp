// train/ledger: the privacy ledger with pre-training release lines (DPAR's DP-APPR matrix)
// before the sgd lines: exact round trip, order and numbering checks, old ledgers, and the
// accountant rebuilt from it.
#include "dpgnn/train/ledger.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpgnn/util/error.h"
#include "test_support.h"

namespace dpgnn::train {
namespace {

using privacy::Mechanism;

LedgerEntry release(const std::string& name, const Mechanism& m, std::int64_t count, double eps) {
  LedgerEntry e;
  e.release = name;
  e.mechanism = m;
  e.count = count;
  e.epsilon = eps;
  return e;
}

LedgerEntry sgd(std::int64_t step, const Mechanism& m, double eps) {
  LedgerEntry e;
  e.step = step;
  e.mechanism = m;
  e.epsilon = eps;
  return e;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path);
  for (const auto& l : lines) out << l << "\n";
}

std::string data_error_of(const std::string& path) {
  try {
    read_ledger(path);
  } catch (const DataError& e) {
    return e.what();
  }
  return "no DataError";
}

void write_ledger(const std::string& path, const std::vector<LedgerEntry>& entries) {
  LedgerWriter w(path);
  for (const auto& e : entries) w.append(e);
}

// A DPAR-like ledger: 2 release lines (Gumbel selections, Laplace values) + 3 sgd steps.
std::vector<LedgerEntry> dpar_entries() {
  const Mechanism sel = Mechanism::exponential(1.0 / 3.0 + 20.0);
  const Mechanism val = Mechanism::laplace(std::nextafter(40.0, 41.0));
  const Mechanism step = Mechanism::group_wor(2708, 64, 17, 1.1);
  return {release("dp-appr", sel, 4000, 0.25), release("dp-appr", val, 4000, 0.5),
          sgd(0, step, 0.6), sgd(1, step, 0.7), sgd(2, step, 0.8)};
}

TEST(Ledger, ReleaseAndSgdLinesRoundTripExactly) {
  testing::TempDir tmp;
  const std::string path = tmp.file("ledger.jsonl");
  const auto entries = dpar_entries();
  write_ledger(path, entries);
  const auto back = read_ledger(path);
  ASSERT_EQ(back.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(back[i].release, entries[i].release) << i;
    EXPECT_EQ(back[i].count, entries[i].count) << i;
    EXPECT_EQ(back[i].step, entries[i].step) << i;
    EXPECT_TRUE(back[i].mechanism == entries[i].mechanism) << i;  // bit for bit
    EXPECT_EQ(back[i].epsilon, entries[i].epsilon) << i;
  }
  EXPECT_FALSE(back[0].is_sgd());
  EXPECT_TRUE(back[2].is_sgd());
  EXPECT_EQ(sgd_steps(back), 3);

  // The JSON shape: release lines carry release and count and no step; sgd lines are as
  // before (step, no release, no count).
  std::ifstream in(path);
  std::string line;
  std::vector<nlohmann::json> js;
  while (std::getline(in, line)) js.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(js.size(), 5u);
  EXPECT_EQ(js[0].at("release"), "dp-appr");
  EXPECT_EQ(js[0].at("count"), 4000);
  EXPECT_EQ(js[0].at("scheme"), "exponential");
  EXPECT_FALSE(js[0].contains("step"));
  EXPECT_EQ(js[1].at("scheme"), "laplace");
  EXPECT_EQ(js[2].at("step"), 0);
  EXPECT_FALSE(js[2].contains("release"));
  EXPECT_FALSE(js[2].contains("count"));
  EXPECT_EQ(js[2].at("scheme"), "groupwor");
}

TEST(Ledger, AccountantFromLedgerEqualsOneBuiltDirectly) {
  testing::TempDir tmp;
  const std::string path = tmp.file("ledger.jsonl");
  const auto entries = dpar_entries();
  write_ledger(path, entries);
  const privacy::Accountant rebuilt =
      accountant_from_ledger(read_ledger(path), privacy::Conversion::kBalle);
  privacy::Accountant direct({}, privacy::Conversion::kBalle);
  direct.step(Mechanism::exponential(1.0 / 3.0 + 20.0), 4000);
  direct.step(Mechanism::laplace(std::nextafter(40.0, 41.0)), 4000);
  direct.step(Mechanism::group_wor(2708, 64, 17, 1.1), 3);
  EXPECT_EQ(rebuilt.serialise(), direct.serialise());
  EXPECT_EQ(rebuilt.epsilon(1e-5).epsilon, direct.epsilon(1e-5).epsilon);
}

TEST(Ledger, ReleaseAfterAnSgdLineIsRefusedNamingFileAndLine) {
  testing::TempDir tmp;
  const std::string path = tmp.file("ledger.jsonl");
  {
    LedgerWriter w(path);
    w.append(release("dp-appr", Mechanism::exponential(5.0), 10, 0.1));
    w.append(sgd(0, Mechanism::gaussian(1.0), 0.2));
    w.append(release("dp-appr", Mechanism::laplace(5.0), 10, 0.3));  // too late
  }
  const std::string why = data_error_of(path);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("line 3"), std::string::npos) << why;
  EXPECT_NE(why.find("dp-appr"), std::string::npos) << why;
}

TEST(Ledger, StepNumberingCountsSgdLinesOnly) {
  testing::TempDir tmp;
  const std::string ok = tmp.file("ok.jsonl"), bad = tmp.file("bad.jsonl");
  const std::string rel =
      R"({"release": "dp-appr", "mechanism": "exponential z=5", "count": 7, "epsilon": 0.1})";
  write_lines(ok, {rel, rel, R"({"step": 0, "mechanism": "gaussian z=1", "epsilon": 0.2})",
                   R"({"step": 1, "mechanism": "gaussian z=1", "epsilon": 0.3})"});
  const auto entries = read_ledger(ok);
  EXPECT_EQ(entries.size(), 4u);
  EXPECT_EQ(sgd_steps(entries), 2);
  EXPECT_EQ(entries[0].count, 7);
  // The first sgd line after two releases must still be step 0 (not 2).
  write_lines(bad, {rel, R"({"step": 1, "mechanism": "gaussian z=1", "epsilon": 0.2})"});
  const std::string why = data_error_of(bad);
  EXPECT_NE(why.find("line 2"), std::string::npos) << why;
  EXPECT_NE(why.find("step 0 was expected"), std::string::npos) << why;
}

// Format 3 numbers the sgd lines from 1, as metrics.jsonl and the progress lines do; a
// format-2 ledger (numbered from 0) reads the same, and a resume appending to it keeps its
// numbering, so one file never mixes the two.
TEST(Ledger, FormatThreeNumbersStepsFromOneAndFormatTwoKeepsItsNumbering) {
  testing::TempDir tmp;
  const Mechanism step = Mechanism::gaussian(1.0);
  const nlohmann::json binding = {{"config_digest", "x"}};
  const std::string v3 = tmp.file("v3.jsonl");
  {
    LedgerWriter w(v3);
    w.append_header(binding);
    w.append(sgd(0, step, 0.1));
    w.append(sgd(1, step, 0.2));
  }
  {
    LedgerWriter resumed(v3);  // a resume: the header says format 3
    resumed.append(sgd(2, step, 0.3));
  }
  std::ifstream in(v3);
  std::vector<nlohmann::json> js;
  for (std::string line; std::getline(in, line);) js.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(js.size(), 4u);
  EXPECT_EQ(js[0].at("version"), kLedgerFormat);
  EXPECT_EQ(js[1].at("step"), 1);
  EXPECT_EQ(js[2].at("step"), 2);
  EXPECT_EQ(js[3].at("step"), 3);
  const Ledger l3 = read_ledger_file(v3);
  EXPECT_EQ(l3.format, 3);
  ASSERT_EQ(l3.entries.size(), 3u);
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(l3.entries[static_cast<std::size_t>(i)].step, i);

  const std::string v2 = tmp.file("v2.jsonl");
  write_lines(v2, {R"({"ledger": "dpgnn", "version": 2, "binding": {"config_digest": "x"}})",
                   R"({"step": 0, "mechanism": "gaussian z=1", "epsilon": 0.1})"});
  {
    LedgerWriter resumed(v2);
    resumed.append(sgd(1, step, 0.2));
  }
  const Ledger l2 = read_ledger_file(v2);
  EXPECT_EQ(l2.format, 2);
  ASSERT_EQ(l2.entries.size(), 2u);
  EXPECT_EQ(l2.entries[1].step, 1);

  // A format-3 file numbered from 0 is refused, naming what it expected.
  const std::string wrong = tmp.file("wrong.jsonl");
  write_lines(wrong, {R"({"ledger": "dpgnn", "version": 3, "binding": {"config_digest": "x"}})",
                      R"({"step": 0, "mechanism": "gaussian z=1", "epsilon": 0.1})"});
  const std::string why = data_error_of(wrong);
  EXPECT_NE(why.find("step 1 was expected"), std::string::npos) << why;
}

TEST(Ledger, OldLedgersWithoutReleaseOrCountReadAsSgdSteps) {
  testing::TempDir tmp;
  const std::string path = tmp.file("ledger.jsonl");
  write_lines(path, {R"({"step": 0, "mechanism": "wor n=120 m=60 z=1.25", "scheme": "wor", "sampling_rate": 0.5, "noise_multiplier": 1.25, "subgraphs": 120, "batch_size": 60, "epsilon": 0.83})",
                     R"({"step": 1, "mechanism": "wor n=120 m=60 z=1.25", "scheme": "wor", "sampling_rate": 0.5, "noise_multiplier": 1.25, "subgraphs": 120, "batch_size": 60, "epsilon": 0.9})"});
  const auto entries = read_ledger(path);
  ASSERT_EQ(entries.size(), 2u);
  for (const auto& e : entries) {
    EXPECT_TRUE(e.is_sgd());
    EXPECT_EQ(e.count, 1);
  }
  EXPECT_EQ(sgd_steps(entries), 2);
  EXPECT_EQ(accountant_from_ledger(entries, privacy::Conversion::kBalle).serialise(),
            "2 wor n=120 m=60 z=1.25\n");
}

TEST(Ledger, MalformedReleaseLinesAreRefused) {
  testing::TempDir tmp;
  int n = 0;
  for (const std::string& line : {
           // a release with a step, with count 0, with an empty name; an sgd line with count 2
           std::string(R"({"release": "dp-appr", "step": 0, "mechanism": "laplace z=1", "count": 1, "epsilon": 0.1})"),
           std::string(R"({"release": "dp-appr", "mechanism": "laplace z=1", "count": 0, "epsilon": 0.1})"),
           std::string(R"({"release": "", "mechanism": "laplace z=1", "count": 1, "epsilon": 0.1})"),
           std::string(R"({"step": 0, "mechanism": "gaussian z=1", "count": 2, "epsilon": 0.1})"),
       }) {
    const std::string path = tmp.file("bad" + std::to_string(n++) + ".jsonl");
    write_lines(path, {line});
    const std::string why = data_error_of(path);
    EXPECT_NE(why.find("line 1"), std::string::npos) << line << "\n" << why;
  }
  // The writer refuses what the reader would refuse.
  LedgerWriter w(tmp.file("w.jsonl"));
  LedgerEntry two = sgd(0, Mechanism::gaussian(1.0), 0.1);
  two.count = 2;
  EXPECT_THROW(w.append(two), std::invalid_argument);
  EXPECT_THROW(w.append(release("dp-appr", Mechanism::laplace(1.0), 0, 0.1)), std::invalid_argument);
  EXPECT_THROW(w.append(release("", Mechanism::laplace(1.0), 1, 0.1)), std::invalid_argument);
}

// DPAR with graph sampling: the "graph-sample" line first, then the release and the steps;
// the accountant rebuilt from it amplifies by the sample.
TEST(Ledger, TheGraphSampleLineComesFirstAndAmplifiesTheRebuiltEpsilon) {
  testing::TempDir tmp;
  const std::string path = tmp.file("ledger.jsonl");
  LedgerEntry sample;
  sample.release = kGraphSampleRelease;
  sample.subsample = privacy::Subsample::of(14666, 1320);
  auto entries = dpar_entries();
  entries.insert(entries.begin(), sample);
  write_ledger(path, entries);
  const auto back = read_ledger(path);
  ASSERT_EQ(back.size(), entries.size());
  ASSERT_TRUE(back[0].subsample.has_value());
  EXPECT_EQ(*back[0].subsample, *sample.subsample);
  EXPECT_FALSE(back[1].subsample.has_value());
  EXPECT_EQ(sgd_steps(back), 3);
  const auto acc = accountant_from_ledger(back, privacy::Conversion::kBalle);
  ASSERT_TRUE(acc.subsample().has_value());
  privacy::Accountant whole;
  for (std::size_t i = 1; i < back.size(); ++i) whole.step(back[i].mechanism, back[i].count);
  const double q = 1320.0 / 14666.0;
  EXPECT_NEAR(acc.epsilon(1e-5).epsilon,
              std::log1p(q * std::expm1(whole.epsilon(1e-5 / q).epsilon)), 1e-12);
  EXPECT_LT(acc.epsilon(1e-5).epsilon, whole.epsilon(1e-5).epsilon);

  // Anywhere but first, or without its subsample, or a subsample on another line: refused.
  const std::string sample_line = R"({"release": "graph-sample", "subsample": "subsample n=10 m=2", "count": 1, "epsilon": 0})";
  const std::string step_line = R"({"step": 0, "mechanism": "gaussian z=1", "epsilon": 0.1})";
  int n = 0;
  for (const auto& lines : std::vector<std::vector<std::string>>{
           {step_line, sample_line},
           {sample_line, sample_line},
           {R"({"release": "graph-sample", "count": 1, "epsilon": 0})"},
           {R"({"release": "graph-sample", "subsample": "subsample n=10 m=11", "count": 1, "epsilon": 0})"},
       }) {
    const std::string bad = tmp.file("gs" + std::to_string(n++) + ".jsonl");
    write_lines(bad, lines);
    EXPECT_NE(data_error_of(bad), "no DataError") << lines.back();
  }
  LedgerWriter w(tmp.file("w.jsonl"));
  LedgerEntry misplaced = release("dp-appr", Mechanism::laplace(1.0), 1, 0.1);
  misplaced.subsample = privacy::Subsample::of(10, 2);
  EXPECT_THROW(w.append(misplaced), std::invalid_argument);
}

}  // namespace
}  // namespace dpgnn::train
