// A rank that a signal ends is named by its watcher, with the role it told; a rank that printed its own failure
// line is not named twice; the rank's exit status and signal reach mpiexec as they were; SIGTERM reaches the
// rank; and the rank dies with its watcher.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "core/rank_watch.hpp"

using namespace fedavg::core;
using testing::HasSubstr;
using testing::Not;

namespace {

class RankWatch : public testing::Test {
 protected:
  void SetUp() override {
    // Forks and waits: a test that hangs fails here, well inside meson's limit (the watcher dies of SIGALRM, and
    // its rank with it).
    ::alarm(30);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    unsetenv("FEDAVG_RANK_WATCH");
    unsetenv("PMI_RANK");
    unsetenv("SLURM_PROCID");
  }
  void TearDown() override { ::alarm(0); }
};

[[noreturn]] void die_of(int signo) {
  const struct rlimit no_core { 0, 0 };
  ::setrlimit(RLIMIT_CORE, &no_core);
  std::signal(signo, SIG_DFL);
  std::raise(signo);
  std::_Exit(100);
}

// Whether process `pid` is gone (or a zombie that nobody has reaped yet).
bool gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
}

TEST_F(RankWatch, AKilledRankIsNamedWithItsRoleAndTheJobSeesTheSignal) {
  EXPECT_EXIT(
      {
        watch_rank();
        tell_watcher({3, Role::Learner});
        die_of(SIGKILL);
      },
      testing::KilledBySignal(SIGKILL), "\\[fedavg\\] rank 3 \\(Learner\\): killed by signal 9 \\(SIGKILL\\) on host");
}

TEST_F(RankWatch, ACrashIsNamedByItsSignal) {
  EXPECT_EXIT(
      {
        watch_rank();
        tell_watcher({0, Role::Dispatcher});
        die_of(SIGSEGV);
      },
      testing::KilledBySignal(SIGSEGV), "rank 0 \\(Dispatcher\\): killed by signal 11 \\(SIGSEGV\\)");
}

TEST_F(RankWatch, ARankThatDiesBeforeItKnowsItsNumberIsNamedByTheLaunchers) {
  setenv("PMI_RANK", "7", 1);
  EXPECT_EXIT(
      {
        watch_rank();
        die_of(SIGKILL);
      },
      testing::KilledBySignal(SIGKILL), "rank 7 \\(Unassigned\\): killed by signal 9");
}

TEST_F(RankWatch, AFailureTheRankReportedIsNotNamedAgain) {
  EXPECT_EXIT(
      {
        watch_rank();
        tell_watcher({2, Role::Filter});
        tell_watcher_failure_reported();
        die_of(SIGKILL);
      },
      testing::KilledBySignal(SIGKILL), Not(HasSubstr("killed by signal")));
}

TEST_F(RankWatch, TheRanksExitStatusIsTheJobs) {
  EXPECT_EXIT(
      {
        watch_rank();
        tell_watcher({1, Role::Tokenizer});
        std::_Exit(7);
      },
      testing::ExitedWithCode(7), Not(HasSubstr("[fedavg]")));
}

TEST_F(RankWatch, SigtermReachesTheRank) {
  EXPECT_EXIT(
      {
        const pid_t started = ::getpid();
        watch_rank();
        if (::getpid() == started) std::_Exit(3);  // not watched: there is no watcher to signal
        std::signal(SIGTERM, [](int) { std::_Exit(42); });
        ::kill(::getppid(), SIGTERM);  // as mpiexec signals the process it started
        std::this_thread::sleep_for(std::chrono::seconds(10));
        std::_Exit(4);
      },
      testing::ExitedWithCode(42), "");
}

TEST_F(RankWatch, TheRankDiesWithItsWatcher) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t watcher = ::fork();
  ASSERT_GE(watcher, 0);
  if (watcher == 0) {
    ::close(fds[0]);
    watch_rank();
    const pid_t me = ::getpid();
    if (::write(fds[1], &me, sizeof me) != sizeof me) std::_Exit(1);
    std::this_thread::sleep_for(std::chrono::seconds(20));
    std::_Exit(0);
  }
  ::close(fds[1]);
  pid_t rank = 0;
  ASSERT_EQ(::read(fds[0], &rank, sizeof rank), static_cast<ssize_t>(sizeof rank));
  ::close(fds[0]);
  ASSERT_NE(rank, watcher);
  ASSERT_FALSE(gone(rank));
  ::kill(watcher, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(watcher, &status, 0), watcher);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!gone(rank) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(gone(rank));
}

}  // namespace
