// core::OutputFolder: nothing finished is lost. A new run refuses a folder that holds an earlier run, leaving
// it untouched; --overwrite moves that run aside and only the new run's first checkpoint (commit) deletes it;
// an interrupted --overwrite keeps the finished run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/output_folder.hpp"

namespace fs = std::filesystem;
using fedavg::core::InputError;
using fedavg::core::OutputFolder;

namespace {

class OutputFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fedavg_out_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& p, const std::string& s) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << s;
  }
  std::string read(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void earlier_run() {
    write(dir_ / "kjv.h5", "checkpoint");
    write(dir_ / "kjv_metrics.csv", "metrics");
    write(dir_ / "config" / "cfg.json", "{}");
    write(dir_ / "notes.txt", "the user's own file");
  }
  fs::path dir_;
};

}  // namespace

TEST_F(OutputFolderTest, AnEmptyOrNewFolderIsClaimed) {
  OutputFolder::claim(dir_, false, false, true);
  OutputFolder::claim(dir_ / "new" / "deeper", false, false, true);
  EXPECT_TRUE(fs::is_directory(dir_ / "new" / "deeper"));
  write(dir_ / "notes.txt", "not a run's file");
  EXPECT_NO_THROW(OutputFolder::claim(dir_, false, false, true));
}

TEST_F(OutputFolderTest, AnEarlierRunIsRefusedAndLeftUntouched) {
  earlier_run();
  try {
    OutputFolder::claim(dir_, false, false, true);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    for (const char* part : {"kjv.h5", "kjv_metrics.csv", "config", "--resume", "--overwrite"})
      EXPECT_NE(what.find(part), std::string::npos) << what;
  }
  EXPECT_EQ(read(dir_ / "kjv.h5"), "checkpoint");
  EXPECT_EQ(read(dir_ / "kjv_metrics.csv"), "metrics");
  EXPECT_FALSE(fs::exists(dir_ / OutputFolder::kPrevious));
  EXPECT_NO_THROW(OutputFolder::claim(dir_, true, false, true));  // --resume continues it
}

TEST_F(OutputFolderTest, AConfigFolderIsTheUsersUnlessTheRunPreparesOne) {
  write(dir_ / "config" / "cfg.json", "{}");  // --config OUT/config: the user's own
  EXPECT_NO_THROW(OutputFolder::claim(dir_, false, false, false));
  write(dir_ / "kjv.h5", "checkpoint");
  EXPECT_THROW(OutputFolder::claim(dir_, false, false, true), InputError);  // a run prepared it
  OutputFolder::claim(dir_, false, true, false);
  EXPECT_TRUE(fs::exists(dir_ / "config" / "cfg.json"));  // stays where the run reads it
  EXPECT_TRUE(fs::exists(dir_ / OutputFolder::kPrevious / "kjv.h5"));
}

TEST_F(OutputFolderTest, OverwriteKeepsTheEarlierRunUntilTheFirstCheckpoint) {
  earlier_run();
  OutputFolder::claim(dir_, false, true, true);
  const fs::path previous = dir_ / OutputFolder::kPrevious;
  EXPECT_EQ(read(previous / "kjv.h5"), "checkpoint");
  EXPECT_EQ(read(previous / "config" / "cfg.json"), "{}");
  EXPECT_FALSE(fs::exists(dir_ / "kjv.h5"));
  EXPECT_EQ(read(dir_ / "notes.txt"), "the user's own file");  // not a run's file: stays
  OutputFolder::commit(dir_);
  EXPECT_FALSE(fs::exists(previous));
}

TEST_F(OutputFolderTest, AnInterruptedOverwriteLosesNothing) {
  earlier_run();
  OutputFolder::claim(dir_, false, true, true);
  // The new run is killed before its first checkpoint: it left a metrics file and a config.
  write(dir_ / "kjv_metrics.csv", "round 0 only");
  write(dir_ / "config" / "cfg.json", "{\"new\": 1}");
  EXPECT_THROW(OutputFolder::claim(dir_, false, false, true), InputError);  // still refused without a flag
  OutputFolder::claim(dir_, false, true, true);                             // overwrite again
  const fs::path previous = dir_ / OutputFolder::kPrevious;
  EXPECT_EQ(read(previous / "kjv.h5"), "checkpoint");  // the finished run is kept
  EXPECT_EQ(read(previous / "kjv_metrics.csv"), "metrics");
  EXPECT_FALSE(fs::exists(dir_ / "kjv_metrics.csv"));  // the unfinished one's files are gone
  // The new run reached its checkpoint but was killed before deleting .previous: the next overwrite replaces it.
  write(dir_ / "kjv.h5", "new checkpoint");
  OutputFolder::claim(dir_, false, true, true);
  EXPECT_EQ(read(previous / "kjv.h5"), "new checkpoint");
}

TEST_F(OutputFolderTest, ResumeAfterAnInterruptedOverwriteSaysWhereTheRunIs) {
  earlier_run();
  OutputFolder::claim(dir_, false, true, true);
  try {
    OutputFolder::claim(dir_, true, false, true);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(".previous"), std::string::npos) << e.what();
  }
}

TEST_F(OutputFolderTest, WhatAFailedSetUpLeftIsNoEarlierRun) {
  // A run that failed after preparing its config, or before its first checkpoint: no checkpoint, no results.
  write(dir_ / "config" / "cfg.json", "{}");
  write(dir_ / "kjv_metrics.csv", "round 0 only");
  write(dir_ / "kjv_ranks.json", "{}");
  write(dir_ / "notes.txt", "the user's own file");
  try {
    OutputFolder::claim(dir_, true, false, true);  // --resume: nothing to resume, and it says what to do
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("without --resume"), std::string::npos) << e.what();
  }
  const auto removed = OutputFolder::claim(dir_, false, false, true);  // the same command again: it starts
  EXPECT_EQ(removed, (std::vector<std::string>{"config", "kjv_metrics.csv", "kjv_ranks.json"}));
  EXPECT_FALSE(fs::exists(dir_ / "config"));
  EXPECT_EQ(read(dir_ / "notes.txt"), "the user's own file");
  // Results without a checkpoint are a finished run's: still refused.
  write(dir_ / "kjv.w2v.txt", "vectors");
  EXPECT_THROW(OutputFolder::claim(dir_, false, false, true), InputError);
}
