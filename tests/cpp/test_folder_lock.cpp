// core::FolderLock: one job at a time in an output folder. A second lock on the same folder is refused at once,
// naming the holder's process and host; the lock is free again once its holder is gone; a link is never followed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/folder_lock.hpp"

namespace fs = std::filesystem;
using fedavg::core::FolderLock;
using fedavg::core::InputError;

namespace {

class FolderLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fedavg_lock_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(FolderLockTest, ASecondLockIsRefusedNamingTheFirst) {
  FolderLock first(dir_);
  try {
    FolderLock second(dir_);
    FAIL() << "a second lock was taken";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("is in use by another job (pid " + std::to_string(::getpid()) + " on host "), std::string::npos)
        << what;
    EXPECT_NE(what.find("another --out"), std::string::npos) << what;
  }
}

TEST_F(FolderLockTest, TheLockIsFreeOnceItsHolderIsGone) {
  std::optional<FolderLock> first(std::in_place, dir_);
  first.reset();
  EXPECT_NO_THROW(FolderLock again(dir_));
}

TEST_F(FolderLockTest, ALinkInPlaceOfTheLockFileIsNotFollowed) {
  fs::create_directories(dir_);
  const fs::path victim = dir_ / "victim.txt";
  std::ofstream(victim) << "keep";
  fs::create_symlink(victim, dir_ / FolderLock::kName);
  EXPECT_THROW(FolderLock lock(dir_), fedavg::core::Error);
  std::ifstream in(victim);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "keep");
}

}  // namespace
