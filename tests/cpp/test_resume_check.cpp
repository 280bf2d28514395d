// What --resume refuses: a checkpoint of another run, strategy, corpora or pipeline count, and weights that no
// longer give the test loss their checkpoint recorded. Each error names the checkpoint (or the corpus).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "core/checksum.hpp"
#include "core/error.hpp"
#include "training/resume_check.hpp"

using fedavg::core::Checkpoint;
using fedavg::core::CorpusSummary;
using fedavg::training::ResumeCheck;

namespace {

const std::vector<std::string> kWords = {"the", "cat", "sat"};

ResumeCheck::Run two_corpora() {
  return {"out/run.h5",
          "run",
          "fedavg",
          {"a.txt", "b.txt"},
          {{100, 7}, {200, 8}},
          2,
          false,
          "config/test.txt",
          kWords.size(),
          fedavg::core::checksum(kWords)};
}

// A checkpoint `run` would write.
Checkpoint written_by(const ResumeCheck::Run& run) {
  Checkpoint ck;
  ck.info.data_name = run.data_name;
  ck.info.strategy = run.strategy;
  ck.corpora = run.corpora;
  ck.positions.resize(static_cast<std::size_t>(run.pipelines));
  ck.vocabulary = kWords;
  return ck;
}

// The message of the error `f` throws, which must be of type E; "" if it throws none.
template <class E> std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ResumeCheck, AcceptsTheCheckpointOfThisRun) {
  const ResumeCheck check(two_corpora());
  EXPECT_NO_THROW(check.check(written_by(two_corpora())));
}

TEST(ResumeCheck, RefusesAnotherRunOrStrategy) {
  const ResumeCheck check(two_corpora());
  auto ck = written_by(two_corpora());
  ck.info.data_name = "other";
  EXPECT_EQ(error_of<fedavg::core::Error>([&] { check.check(ck); }),
            "out/run.h5: written by run \"other\", not \"run\"");
  ck = written_by(two_corpora());
  ck.info.strategy = "bsp";
  EXPECT_EQ(error_of<fedavg::core::Error>([&] { check.check(ck); }),
            "out/run.h5: written with strategy bsp, cfg.json says fedavg");
}

TEST(ResumeCheck, RefusesOtherCorpora) {
  const ResumeCheck check(two_corpora());
  auto ck = written_by(two_corpora());
  ck.corpora.pop_back();
  EXPECT_EQ(error_of<fedavg::core::InputError>([&] { check.check(ck); }),
            "out/run.h5: written from 1 corpus file(s), this run names 2; resume with the same corpora");
  ck = written_by(two_corpora());
  ck.corpora[1].bytes = 150;
  EXPECT_EQ(error_of<fedavg::core::InputError>([&] { check.check(ck); }),
            "corpus b.txt: not the file out/run.h5 was written from (it had 150 bytes, now 200); resume with the "
            "same corpora, or start a new run with --overwrite");
  ck = written_by(two_corpora());
  ck.corpora[0].hash = 9;
  EXPECT_EQ(error_of<fedavg::core::InputError>([&] { check.check(ck); }),
            "corpus a.txt: not the file out/run.h5 was written from (its first or last MiB differ); resume with "
            "the same corpora, or start a new run with --overwrite");
}

TEST(ResumeCheck, ComparesOnlyTheCorporaBothSidesCouldRead) {
  auto run = two_corpora();
  run.corpora[0].bytes = -1;  // unreadable on this rank now
  auto ck = written_by(two_corpora());
  ck.corpora[0].hash = 9;
  ck.corpora[1].bytes = -1;  // unreadable where the checkpoint was written
  EXPECT_NO_THROW(ResumeCheck(run).check(ck));
  ck.corpora.clear();  // an older checkpoint, without summaries
  EXPECT_NO_THROW(ResumeCheck(two_corpora()).check(ck));
}

TEST(ResumeCheck, NeedsAPositionPerPipelineUnlessSharded) {
  auto ck = written_by(two_corpora());
  ck.positions.resize(3);
  EXPECT_EQ(error_of<fedavg::core::Error>([&] { ResumeCheck(two_corpora()).check(ck); }),
            "out/run.h5: written with 3 corpus file(s), this run has 2");
  auto sharded = two_corpora();
  sharded.sharded = true;
  EXPECT_NO_THROW(ResumeCheck(sharded).check(ck));
}

TEST(ResumeCheck, TheTestLossMustBeTheRecordedOne) {
  const ResumeCheck check(two_corpora());
  EXPECT_NO_THROW(check.check_loss(5.0, 5.0));
  EXPECT_NO_THROW(check.check_loss(5.00002, 5.0));   // within 1e-5 relative
  EXPECT_NO_THROW(check.check_loss(0.100009, 0.1));  // within 1e-5 absolute below 1
  EXPECT_EQ(error_of<fedavg::core::Error>([&] { check.check_loss(5.1, 5.0); }),
            "out/run.h5: the test loss of its weights is 5.100000, it recorded 5.000000 when it was written: the "
            "file, or the test set config/test.txt, has changed since");
  EXPECT_FALSE(error_of<fedavg::core::Error>([&] { check.check_loss(std::nan(""), 5.0); }).empty());
}

TEST(ResumeCheck, RefusesAnotherVocabulary) {
  const ResumeCheck check(two_corpora());
  auto ck = written_by(two_corpora());
  ck.vocabulary = {"the", "dog", "sat"};
  EXPECT_EQ(error_of<fedavg::core::InputError>([&] { check.check(ck); }),
            "out/run.h5: dataset vocabulary (3 words) differs from this run's vocabulary (3 words): the checkpoint was "
            "written with another vocabulary");
  ck.vocabulary.pop_back();
  EXPECT_NE(error_of<fedavg::core::InputError>([&] { check.check(ck); }), "");
}
