// train/resume_guard: which resumes would spend the privacy budget twice (issue 13).
#include "resume_guard.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_support.h"

namespace dpgnn::train {
namespace {

ResumeFacts finished_run() {
  ResumeFacts f;
  f.ledger_exists = true;
  f.ledger_steps = 30;
  f.checkpoint_exists = true;
  f.checkpoint_step = 30;
  f.secrets_available = false;  // removed at the end of the run
  f.training_evidence = {"checkpoint.h5", "model.h5", "summary.json", "metrics.jsonl"};
  return f;
}

TEST(ResumeGuard, AFinishedRunWithItsCheckpointMayResume) {
  EXPECT_EQ(resume_refusal(finished_run()), "");  // nothing to replay, nothing new to spend
}

TEST(ResumeGuard, AFinishedRunWithoutItsCheckpointIsRefused) {
  ResumeFacts f = finished_run();
  f.checkpoint_exists = false;
  f.checkpoint_step = 0;
  f.training_evidence = {"model.h5", "summary.json", "metrics.jsonl"};
  const std::string why = resume_refusal(f);
  EXPECT_NE(why.find("30 released step(s)"), std::string::npos) << why;
  EXPECT_NE(why.find("no checkpoint.h5"), std::string::npos) << why;
}

TEST(ResumeGuard, StepsAfterTheCheckpointNeedTheSecrets) {
  ResumeFacts f = finished_run();
  f.checkpoint_step = 10;  // a crash after step 17: 7 steps to replay
  f.ledger_steps = 18;
  f.secrets_available = true;
  EXPECT_EQ(resume_refusal(f), "");
  f.secrets_available = false;
  const std::string why = resume_refusal(f);
  EXPECT_NE(why.find("steps 10..17"), std::string::npos) << why;
  EXPECT_NE(why.find("secrets"), std::string::npos) << why;
}

TEST(ResumeGuard, PinnedSecretsReplayFromTheStartWithoutACheckpoint) {
  ResumeFacts f = finished_run();
  f.checkpoint_exists = false;
  f.checkpoint_step = 0;
  f.secrets_available = true;  // pinned: the batches and the noise are reproducible
  EXPECT_EQ(resume_refusal(f), "");
}

TEST(ResumeGuard, AMissingLedgerIsRefusedOnceTrainingHappened) {
  ResumeFacts f = finished_run();
  f.ledger_exists = false;
  f.ledger_steps = 0;
  const std::string why = resume_refusal(f);
  EXPECT_NE(why.find("ledger.jsonl is missing"), std::string::npos) << why;
  EXPECT_NE(why.find("model.h5"), std::string::npos) << why;
  // A run that stopped before its first step left no evidence: it may start over.
  f.training_evidence.clear();
  f.checkpoint_exists = false;
  f.checkpoint_step = 0;
  EXPECT_EQ(resume_refusal(f), "");
}

TEST(ResumeGuard, ATruncatedLedgerIsRefused) {
  ResumeFacts f = finished_run();
  f.ledger_steps = 20;
  EXPECT_NE(resume_refusal(f).find("truncated"), std::string::npos);
}

TEST(ResumeGuard, TrainingEvidenceNamesTheFilesPresent) {
  dpgnn::testing::TempDir tmp;
  const std::string dir = tmp.path().string();
  EXPECT_TRUE(training_evidence(dir).empty());
  std::ofstream(tmp.file("metrics.jsonl"));  // empty: no step was logged
  std::ofstream(tmp.file("config.yaml")) << "method: drw\n";
  EXPECT_TRUE(training_evidence(dir).empty());
  std::ofstream(tmp.file("metrics.jsonl")) << "{\"step\": 1}\n";
  std::ofstream(tmp.file("model.h5")) << "x";
  EXPECT_EQ(training_evidence(dir), (std::vector<std::string>{"model.h5", "metrics.jsonl"}));
}


// Issue 34: a stored release is budget spent. Without the ledger that counted it (or with a
// ledger that lost its record) a resume would draw it again: refused, naming what was found.
TEST(ResumeGuard, AStoredReleaseWithoutItsLedgerIsRefused) {
  ResumeFacts f;  // killed right after the label release: no step, no training output
  f.stored_releases = {"releases/dp-appr.json", "releases/labels-rr.json"};
  const std::string why = resume_refusal(f);
  EXPECT_NE(why.find("ledger.jsonl is missing"), std::string::npos) << why;
  EXPECT_NE(why.find("releases/labels-rr.json"), std::string::npos) << why;
  // With its ledger, recording both, the same directory may resume (the files are reused).
  f.ledger_exists = true;
  f.recorded_releases = {"releases/dp-appr.json", "releases/labels-rr.json"};
  EXPECT_EQ(resume_refusal(f), "");
}

TEST(ResumeGuard, WithoutTheLedgerItsSecretsOrRunJsonsRecordOfItAreRefused) {
  // The secrets are written after the ledger's header, and run.json records the header: either
  // shows the ledger existed, and what it counted (a release a user deleted too) is unknown.
  ResumeFacts f;
  f.secret_files = {"noise_secret"};
  EXPECT_NE(resume_refusal(f).find("noise_secret"), std::string::npos) << resume_refusal(f);
  f.secret_files.clear();
  f.ledger_was_opened = true;
  EXPECT_NE(resume_refusal(f).find("run.json"), std::string::npos) << resume_refusal(f);
  f.ledger_was_opened = false;
  EXPECT_EQ(resume_refusal(f), "") << "killed before the ledger was written: nothing was drawn";
}

TEST(ResumeGuard, AStoredReleaseTheLedgerDoesNotRecordIsRefused) {
  ResumeFacts f;
  f.ledger_exists = true;
  f.recorded_releases = {"releases/dp-appr.json"};
  f.stored_releases = {"releases/dp-appr.json", "releases/labels-rr.json"};
  const std::string why = resume_refusal(f);
  EXPECT_NE(why.find("releases/labels-rr.json"), std::string::npos) << why;
  EXPECT_NE(why.find("no record"), std::string::npos) << why;
  // A kill while a recorded release was written leaves its temporary file: recorded.
  f.stored_releases = {"releases/dp-appr.json", "releases/dp-appr.json.tmp"};
  EXPECT_EQ(resume_refusal(f), "");
}

TEST(ResumeGuard, StoredReleasesListsEveryFileUnderReleases) {
  dpgnn::testing::TempDir tmp;
  const std::string dir = tmp.path().string();
  EXPECT_TRUE(stored_releases(dir).empty());
  std::filesystem::create_directories(tmp.file("releases"));
  EXPECT_TRUE(stored_releases(dir).empty());
  std::ofstream(tmp.file("releases/labels-rr.json")) << "{}";
  std::ofstream(tmp.file("releases/dp-appr.json.tmp")) << "{";
  EXPECT_EQ(stored_releases(dir), (std::vector<std::string>{"releases/dp-appr.json.tmp", "releases/labels-rr.json"}));
}

TEST(ResumeGuard, ForceRefusesAStoredReleaseAndAnUnfinishedRunWhoseLedgerIsGone) {
  dpgnn::testing::TempDir tmp;
  const std::string dir = tmp.path().string();
  std::ofstream(tmp.file("config.yaml")) << "method: drw\n";
  EXPECT_EQ(overwrite_refusal(dir), "");
  std::ofstream(tmp.file("run.json")) << "{\"ledger_opened\": false}";
  EXPECT_EQ(overwrite_refusal(dir), "");
  std::ofstream(tmp.file("run.json")) << "{\"ledger_opened\": true}";
  EXPECT_NE(overwrite_refusal(dir).find("unfinished private run"), std::string::npos);
  std::ofstream(tmp.file("summary.json")) << "{}";
  EXPECT_EQ(overwrite_refusal(dir), "") << "a finished run: a new run over it is the user's choice";
  std::filesystem::create_directories(tmp.file("releases"));
  std::ofstream(tmp.file("releases/dp-appr.json")) << "{}";
  EXPECT_NE(overwrite_refusal(dir).find("releases/dp-appr.json"), std::string::npos);
}

}  // namespace
}  // namespace dpgnn::train
