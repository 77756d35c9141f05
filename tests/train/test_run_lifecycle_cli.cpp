// A run's lifecycle through `dpgnn train` under mpiexec (issue 21): the run directory is a
// bound, write-ahead record. Killed at every point that matters (before the release, between
// its ledger record and its stored file, right after it, mid-steps, right after a checkpoint)
// and resumed, a run ends with the ledger and parameters of the uninterrupted run (pinned
// seed). A finished run resumed changes nothing; a resume that could change a recorded step
// (an edited config.yaml, another rank count, lost secrets with steps to replay, an altered
// stored release) is refused with exit 2 and leaves the ledger as it was; SIGTERM stops a run
// at a step boundary, resumable.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "dpgnn/util/remove_tree.h"
#include "trainer_fixture.h"

namespace dpgnn::train {
namespace {

using dpgnn::testing::CommandResult;
using dpgnn::testing::run_command;
namespace fs = std::filesystem;

std::string mpiexec(int n, const std::string& env = "") {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "
         "DPGNN_PROGRESS=0 " + env + " mpiexec -n " + std::to_string(n) + " --oversubscribe " + DPGNN_BINARY + " ";
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}


// A DPAR config as a newcomer writes it: method, data, checkpoints, privacy (the method's
// defaults for the rest). `extra` adds YAML lines.
std::string dpar_config(const dpgnn::testing::TempDir& tmp, const std::string& name,
                        const std::string& privacy = "{target_epsilon: 4}") {
  const std::string path = tmp.file(name);
  std::ofstream(path) << "method: dpar\n"
                      << "data: {dataset: " << testing::TrainerData::get().dataset
                      << ", partition: " << testing::random_partition(2) << "}\n"
                      << "train: {checkpoint_every: 20, eval_every: 0, threads: 1}\n"
                      << "privacy: " << privacy << "\n";
  return path;
}

std::string drw_config(const dpgnn::testing::TempDir& tmp, const std::string& name, const std::string& privacy_extra,
                       int checkpoint_every = 10) {
  const auto& d = testing::TrainerData::get();
  const std::string path = tmp.file(name);
  std::ofstream(path) << "method: drw\n"
                      << "data: {dataset: " << d.dataset << ", partition: " << d.partition << "}\n"
                      << "model: {hidden: 16}\n"
                      << "train: {batch_size: 8, max_steps: 30, seed: 4, eval_every: 0, checkpoint_every: "
                      << checkpoint_every << ", threads: 1}\n"
                      << "privacy: {noise_multiplier: 5, target_epsilon: 1.0e9" << privacy_extra << "}\n";
  return path;
}

CommandResult train(const std::string& args, int ranks = 2, const std::string& env = "") {
  return run_command(mpiexec(ranks, env) + "train " + args);
}

std::vector<float> params_of(const std::string& run) {
  return testing::read_model(run + "/model.h5", testing::model_parameter_names(run + "/model.h5"));
}

// The ledger without its header and resume segments (those record where and when a start ran).
std::string ledger_records(const std::string& run) {
  std::istringstream in(bytes_of(run + "/ledger.jsonl"));
  std::string line, out;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("ledger") || j.contains("resume")) continue;
    if (j.contains("end")) {
      nlohmann::json e = j;
      e["end"].erase("ended");
      out += e.dump() + "\n";
      continue;
    }
    out += line + "\n";
  }
  return out;
}

// The example-set size of every step line.
std::set<std::int64_t> step_populations(const std::string& run) {
  std::istringstream in(bytes_of(run + "/ledger.jsonl"));
  std::string line;
  std::set<std::int64_t> out;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("step")) out.insert(j.at("subgraphs").get<std::int64_t>());
  }
  return out;
}

TEST(RunLifecycle, AFinishedPrivateDparRunResumedTwiceChangesNothing) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = dpar_config(tmp, "dpar.yaml");
  const std::string run = tmp.file("run");
  const CommandResult first = train("--config " + cfg + " --out " + run);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string ledger = bytes_of(run + "/ledger.jsonl");
  const std::string summary = bytes_of(run + "/summary.json");
  const std::vector<float> params = params_of(run);
  EXPECT_FALSE(fs::exists(run + "/checkpoint.h5")) << "a finished run keeps no checkpoint by default";
  EXPECT_TRUE(fs::exists(run + "/releases/dp-appr.json"));
  for (int i = 0; i < 2; ++i) {
    const CommandResult again = train("--resume --out " + run);
    ASSERT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("nothing to resume"), std::string::npos) << again.output;
    EXPECT_EQ(bytes_of(run + "/ledger.jsonl"), ledger) << "resume " << i;
    EXPECT_EQ(bytes_of(run + "/summary.json"), summary) << "resume " << i;
    EXPECT_EQ(params_of(run), params) << "resume " << i;
  }
  const auto s = testing::read_json(run + "/summary.json");
  EXPECT_TRUE(s.at("private").get<bool>());
  EXPECT_FALSE(s.at("stopped_by").get<std::string>().empty());
  EXPECT_EQ(s.at("provenance").at("hosts").size(), 2u);
}

TEST(RunLifecycle, ADparRunKilledAfterACheckpointWithItsSecretsLostReusesTheStoredRelease) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = dpar_config(tmp, "dpar.yaml");
  const std::string run = tmp.file("run");
  const CommandResult killed = train("--config " + cfg + " --out " + run, 2, "DPGNN_FAULT_EXIT_AT=after-checkpoint-20");
  ASSERT_NE(killed.exit_code, 0) << killed.output;
  fs::remove(run + "/noise_secret");
  fs::remove(run + "/batch_secret");
  const CommandResult resumed = train("--resume --out " + run);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("reusing the stored dp-appr release"), std::string::npos) << resumed.output;
  EXPECT_EQ(step_populations(run).size(), 1u) << "the steps ran on two example sets";
}

TEST(RunLifecycle, ADparRunKilledMidStepsWithItsSecretsLostIsRefusedAndItsLedgerUntouched) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = dpar_config(tmp, "dpar.yaml");
  const std::string run = tmp.file("run");
  const CommandResult killed = train("--config " + cfg + " --out " + run, 2, "DPGNN_FAULT_EXIT_AFTER_STEP=25");
  ASSERT_NE(killed.exit_code, 0) << killed.output;
  fs::remove(run + "/noise_secret");
  fs::remove(run + "/batch_secret");
  const std::string ledger = bytes_of(run + "/ledger.jsonl");
  const CommandResult resumed = train("--resume --out " + run);
  EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
  EXPECT_NE(resumed.output.find("refusing to resume"), std::string::npos) << resumed.output;
  EXPECT_EQ(bytes_of(run + "/ledger.jsonl"), ledger);
}

TEST(RunLifecycle, ADrwRunWithStepsToReplayRefusesAnEditedConfigAndAnotherRankCount) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = drw_config(tmp, "drw.yaml", "", 100);
  const std::string run = tmp.file("run");
  const CommandResult killed = train("--config " + cfg + " --out " + run, 2, "DPGNN_FAULT_EXIT_AFTER_STEP=5");
  ASSERT_NE(killed.exit_code, 0) << killed.output;
  const std::string ledger = bytes_of(run + "/ledger.jsonl");
  const std::string original = bytes_of(run + "/config.yaml");
  // A tenth of the noise for the replayed steps: refused, naming the key.
  std::ofstream(run + "/config.yaml") << std::regex_replace(original, std::regex("noise_multiplier: 5"),
                                                            "noise_multiplier: 0.5");
  CommandResult r = train("--resume --out " + run);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("noise_multiplier"), std::string::npos) << r.output;
  EXPECT_EQ(bytes_of(run + "/ledger.jsonl"), ledger);
  // The same edit through --config/--set: refused too.
  r = train("--config " + cfg + " --set privacy.noise_multiplier=0.5 --resume --out " + run);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  std::ofstream(run + "/config.yaml") << original;
  // Steps to replay on another rank count: refused.
  r = train("--resume --out " + run, 1);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("rank"), std::string::npos) << r.output;
  EXPECT_EQ(bytes_of(run + "/ledger.jsonl"), ledger);
  // As it was: resumed.
  r = train("--resume --out " + run);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(RunLifecycle, AnElasticRestartFromACheckpointWithNothingToReplayIsAccepted) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = drw_config(tmp, "drw.yaml", "");
  const std::string run = tmp.file("run");
  ASSERT_NE(train("--config " + cfg + " --out " + run, 2, "DPGNN_FAULT_EXIT_AT=after-checkpoint-10").exit_code, 0);
  const CommandResult r = train("--resume --out " + run, 4);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(testing::read_json(run + "/summary.json").at("steps").get<int>(), 30);
}

// Killed at each point, resumed: the ledger and parameters of the uninterrupted run.
TEST(RunLifecycle, KilledAtEveryPointAndResumedEndsLikeTheUninterruptedRun) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = dpar_config(tmp, "dpar.yaml", "{target_epsilon: 4, noise_seed: 7}");
  const std::string whole = tmp.file("whole");
  ASSERT_EQ(train("--config " + cfg + " --out " + whole).exit_code, 0);
  const std::string ledger = ledger_records(whole);
  const std::vector<float> params = params_of(whole);
  const std::vector<std::pair<std::string, std::string>> kills = {
      {"DPGNN_FAULT_EXIT_AT=before-release", "before-release"},
      {"DPGNN_FAULT_EXIT_AT=after-release-record", "between-record-and-file"},
      {"DPGNN_FAULT_EXIT_AT=after-release", "after-release"},
      {"DPGNN_FAULT_EXIT_AFTER_STEP=27", "mid-steps"},
      {"DPGNN_FAULT_EXIT_AT=after-checkpoint-40", "after-checkpoint"}};
  for (const auto& [env, name] : kills) {
    const std::string run = tmp.file(name);
    const CommandResult killed = train("--config " + cfg + " --out " + run, 2, env);
    ASSERT_NE(killed.exit_code, 0) << name << "\n" << killed.output;
    const CommandResult resumed = train("--resume --out " + run);
    ASSERT_EQ(resumed.exit_code, 0) << name << "\n" << resumed.output;
    EXPECT_EQ(ledger_records(run), ledger) << name;
    EXPECT_EQ(params_of(run), params) << name;
  }
}

// Killed at each point of the release `name` (before it, between its ledger record and its file,
// after it; each run in tmp/<point>) and resumed: the ledger records and the model of `whole`,
// the uninterrupted run of `cfg`.
void expect_kills_of_release_resume_like(const dpgnn::testing::TempDir& tmp, const std::string& cfg,
                                         const std::string& name, const std::string& whole) {
  const std::string ledger = ledger_records(whole);
  const std::vector<float> params = params_of(whole);
  for (const std::string point : {"before-release", "after-release-record", "after-release"}) {
    const std::string run = tmp.file(point);
    const CommandResult killed = train("--config " + cfg + " --out " + run, 2, "DPGNN_FAULT_EXIT_AT=" + point + ":" + name);
    ASSERT_NE(killed.exit_code, 0) << point << "\n" << killed.output;
    const CommandResult resumed = train("--resume --out " + run);
    ASSERT_EQ(resumed.exit_code, 0) << point << "\n" << resumed.output;
    EXPECT_EQ(ledger_records(run), ledger) << name << " " << point;
    EXPECT_EQ(params_of(run), params) << name << " " << point;
  }
}

// DPAR with its second release, the training labels by randomized response: killed at each
// point of that release and resumed, the ledger and parameters of the uninterrupted run; the
// released labels are recorded once; predict reads them back (the same test accuracy from
// another directory); an altered stored label file is refused.
TEST(RunLifecycle, TheLabelReleaseKilledAtEachPointAndResumedEndsLikeTheUninterruptedRun) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = dpar_config(tmp, "dpar.yaml", "{target_epsilon: 4, noise_seed: 7}");
  std::ofstream(cfg, std::ios::app) << "dpar: {label_fraction: 0.5, label_min_epsilon: 1}\n";
  const std::string whole = tmp.file("whole");
  const CommandResult w = train("--config " + cfg + " --out " + whole);
  ASSERT_EQ(w.exit_code, 0) << w.output;
  const std::string ledger = ledger_records(whole);
  EXPECT_NE(ledger.find("\"release\":\"labels-rr\""), std::string::npos) << ledger;
  EXPECT_NE(ledger.find("rr k="), std::string::npos) << ledger;
  ASSERT_NO_FATAL_FAILURE(expect_kills_of_release_resume_like(tmp, cfg, "labels-rr", whole));
  // predict, from another directory, uses the stored labels: the run's own test accuracy.
  const nlohmann::json summary = testing::read_json(whole + "/summary.json");
  const CommandResult p =
      run_command("cd " + tmp.path().string() + " && " + mpiexec(1) + "predict --run " + whole + " --json");
  ASSERT_EQ(p.exit_code, 0) << p.output;
  nlohmann::json j;
  std::istringstream lines(p.output);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') j = nlohmann::json::parse(line, nullptr, false);
  ASSERT_TRUE(j.is_object()) << p.output;
  EXPECT_EQ(j.at("test_accuracy").get<double>(), summary.at("test_accuracy").get<double>());
  // An edited label file is refused at the next resume (its digest is in the ledger).
  std::string stored = bytes_of(whole + "/releases/labels-rr.json");
  const auto at = stored.find("\"labels\":[") + 10;
  stored[at] = stored[at] == '0' ? '1' : '0';
  std::ofstream(whole + "/releases/labels-rr.json") << stored;
  const CommandResult refused = run_command(mpiexec(1) + "predict --run " + whole);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("digest"), std::string::npos) << refused.output;
}

// DPAR's class sums (dpar.learner class_sums): the run is the release and no step. Killed at each
// point of the release and resumed, the ledger and the model of the uninterrupted run (a crash
// between the record and the file recomputes the same bytes from the same secret); a resume of
// the finished run has nothing to do; an edited stored release is refused.
TEST(RunLifecycle, TheClassSumsKilledAtEachPointAndResumedEndLikeTheUninterruptedRun) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = dpar_config(tmp, "dpar.yaml", "{target_epsilon: 2, noise_seed: 7}");
  std::ofstream(cfg, std::ios::app) << "dpar: {appr_nodes: 0, learner: class_sums}\nmodel: {bias: false}\n";
  const std::string whole = tmp.file("whole");
  const CommandResult w = train("--config " + cfg + " --out " + whole);
  ASSERT_EQ(w.exit_code, 0) << w.output;
  const std::string ledger = ledger_records(whole);
  EXPECT_NE(ledger.find("\"release\":\"class-sums\""), std::string::npos) << ledger;
  EXPECT_EQ(ledger.find("\"release\":\"sgd\""), std::string::npos) << "no step: " << ledger;
  ASSERT_NO_FATAL_FAILURE(expect_kills_of_release_resume_like(tmp, cfg, "class-sums", whole));
  const CommandResult again = train("--resume --out " + whole);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("nothing to resume"), std::string::npos) << again.output;
  // An edited stored release is refused when a resume reads it (its digest is in the ledger).
  std::string stored = bytes_of(tmp.file("before-release") + "/releases/class-sums.json");
  const auto at = stored.find("\"values\":[") + 10;
  stored[at] = stored[at] == '1' ? '2' : '1';
  const std::string edited = tmp.file("edited");
  ASSERT_NE(train("--config " + cfg + " --out " + edited, 2, "DPGNN_FAULT_EXIT_AT=after-release:class-sums").exit_code, 0);
  std::ofstream(edited + "/releases/class-sums.json") << stored;
  const CommandResult refused = train("--resume --out " + edited);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("digest"), std::string::npos) << refused.output;
}

// Every file (relative path -> bytes) under `dir`.
std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (!e.is_directory()) out[fs::relative(e.path(), dir).generic_string()] = bytes_of(e.path().string());
  return out;
}

// The ledger's label-release records.
std::vector<nlohmann::json> label_release_records(const std::string& run) {
  std::istringstream in(bytes_of(run + "/ledger.jsonl"));
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("release", std::string()) == "labels-rr") out.push_back(j);
  }
  return out;
}

// Issue 34: killed right after the label release was stored, with fresh OS secrets, then any
// combination of the ledger, each secret and releases/ lost. No resume may draw a release
// again: a combination that would is refused (exit 2, nothing written), and one that is
// accepted ends with the first draw, recorded once. Without the ledger the spent budget is
// unknown: always refused; --force over such a directory too.
TEST(RunLifecycle, NoCombinationOfLostFilesRedrawsTheLabelRelease) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = dpar_config(tmp, "dpar.yaml", "{target_epsilon: 4}");
  std::ofstream(cfg, std::ios::app) << "dpar: {label_fraction: 0.5, label_min_epsilon: 1}\n";
  const std::string killed_dir = tmp.file("killed");
  const CommandResult killed =
      train("--config " + cfg + " --out " + killed_dir, 2, "DPGNN_FAULT_EXIT_AT=after-release:labels-rr");
  ASSERT_NE(killed.exit_code, 0) << killed.output;
  const std::string first_draw = bytes_of(killed_dir + "/releases/labels-rr.json");
  ASSERT_FALSE(first_draw.empty());
  ASSERT_EQ(label_release_records(killed_dir).size(), 1u);
  const std::string first_digest = label_release_records(killed_dir)[0].at("digest").get<std::string>();
  const std::vector<std::string> losable = {"ledger.jsonl", "noise_secret", "batch_secret", "releases"};
  for (unsigned mask = 1; mask < (1u << losable.size()); ++mask) {
    std::string lost;
    const std::string run = tmp.file("lost-" + std::to_string(mask));
    fs::copy(killed_dir, run, fs::copy_options::recursive);
    for (std::size_t i = 0; i < losable.size(); ++i)
      if (mask & (1u << i)) {
        {
          std::error_code ec;
          dpgnn::remove_tree(run + "/" + losable[i], ec);
          ASSERT_FALSE(ec) << ec.message();
        }
        lost += losable[i] + " ";
      }
    const bool ledger_lost = mask & 1u, secret_lost = mask & 6u, releases_lost = mask & 8u;
    const bool must_refuse = ledger_lost || (releases_lost && secret_lost);
    const auto before = files_of(run);
    const CommandResult r = train("--resume --out " + run);
    if (must_refuse) {
      EXPECT_EQ(r.exit_code, 2) << "lost: " << lost << "\n" << r.output;
      EXPECT_NE(r.output.find("refusing to resume"), std::string::npos) << "lost: " << lost << "\n" << r.output;
      EXPECT_EQ(files_of(run), before) << "lost: " << lost << ": the refused resume changed the directory";
    } else {
      ASSERT_EQ(r.exit_code, 0) << "lost: " << lost << "\n" << r.output;
      EXPECT_EQ(bytes_of(run + "/releases/labels-rr.json"), first_draw) << "lost: " << lost << ": drawn again";
      const auto records = label_release_records(run);
      ASSERT_EQ(records.size(), 1u) << "lost: " << lost;
      EXPECT_EQ(records[0].at("digest").get<std::string>(), first_digest) << "lost: " << lost;
    }
    if (ledger_lost) {
      // Nor may a new run take the directory over: --force refuses it too.
      const CommandResult forced = train("--config " + cfg + " --force --out " + run);
      EXPECT_EQ(forced.exit_code, 2) << "lost: " << lost << "\n" << forced.output;
      EXPECT_EQ(files_of(run), before) << "lost: " << lost << ": --force changed the directory";
    }
  }
}

TEST(RunLifecycle, AnAlteredStoredReleaseIsRefused) {
  dpgnn::testing::TempDir tmp;
  const std::string cfg = dpar_config(tmp, "dpar.yaml");
  const std::string run = tmp.file("run");
  ASSERT_NE(train("--config " + cfg + " --out " + run, 2, "DPGNN_FAULT_EXIT_AT=after-checkpoint-20").exit_code, 0);
  std::string stored = bytes_of(run + "/releases/dp-appr.json");
  stored.insert(stored.find("\"weights\":[") + 11, "0.5,");
  std::ofstream(run + "/releases/dp-appr.json") << stored;
  const std::string ledger = bytes_of(run + "/ledger.jsonl");
  const CommandResult r = train("--resume --out " + run);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("digest"), std::string::npos) << r.output;
  EXPECT_EQ(bytes_of(run + "/ledger.jsonl"), ledger);
}

TEST(RunLifecycle, DpGnnWithThePaperDegreeBoundSaysItIsNotPrivate) {
  dpgnn::testing::TempDir tmp;
  const auto& d = testing::TrainerData::get();
  const std::string cfg = tmp.file("dpgnn.yaml");
  std::ofstream(cfg) << "method: dpgnn\n"
                     << "data: {dataset: " << d.dataset << ", partition: " << testing::random_partition(2) << "}\n"
                     << "sampler: {degree_bound: paper}\n"
                     << "train: {max_steps: 3, eval_every: 0, threads: 1}\n";
  const std::string run = tmp.file("run");
  const CommandResult r = train("--config " + cfg + " --out " + run);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = testing::read_json(run + "/summary.json");
  EXPECT_FALSE(s.at("private").get<bool>());
  EXPECT_NE(s.at("not_private_because").dump().find("degree_bound"), std::string::npos);
}

TEST(RunLifecycle, SigtermStopsAtAStepBoundaryCheckpointsAndSaysHowToResume) {
  dpgnn::testing::TempDir tmp;
  const auto& d = testing::TrainerData::get();
  const std::string cfg = tmp.file("long.yaml");
  std::ofstream(cfg) << "method: drw\n"
                     << "data: {dataset: " << d.dataset << "}\n"
                     << "train: {batch_size: 8, max_steps: 1000000, eval_every: 0, checkpoint_every: 0, threads: 1}\n"
                     << "privacy: {noise_multiplier: 5, target_epsilon: 1.0e9}\n";
  const std::string run = tmp.file("run");
  const std::string log = tmp.file("log.txt");
  // One rank, no mpiexec: the signal goes to the process itself.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cmd = std::string("DPGNN_PROGRESS=0 OMP_NUM_THREADS=1 exec ") + DPGNN_BINARY + " train --config " +
                            cfg + " --out " + run + " > " + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until it is training (a few steps in the ledger), then ask it to stop.
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (fs::exists(run + "/ledger.jsonl") && fs::file_size(run + "/ledger.jsonl") > 2000) break;
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << bytes_of(log);
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << bytes_of(log);
  const std::string out = bytes_of(log);
  EXPECT_NE(out.find("resume with: dpgnn train --resume --out " + run), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(run + "/checkpoint.h5"));
  EXPECT_TRUE(fs::exists(run + "/noise_secret")) << "an interrupted run keeps its secrets for the resume";
}

}  // namespace
}  // namespace dpgnn::train
