#include "core/rank_watch.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "core/log.hpp"

namespace fedavg::core {
namespace {

// The stop limit until the rank knows its liveness_seconds: half of the default's 120 s.
constexpr float kStopLimit = 60.0f;

// What the rank tells its watcher: sent whole each time (a pipe write this small is atomic).
struct Record {
  std::int32_t rank = -1;
  std::int32_t role = static_cast<std::int32_t>(Role::Unassigned);
  std::int32_t reported = 0;
  float stop_limit = kStopLimit;  // seconds the rank may stay stopped by a signal
  std::int32_t limit_told = 0;    // stop_limit is half of the rank's liveness_seconds, not kStopLimit
};

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};

// Process-wide, as fork is: the rank's end of the pipe, and what it last told; the watcher's child, for its
// signal handler.
int g_to_watcher = -1;
Record g_told;
volatile pid_t g_rank_pid = 0;
pid_t g_watcher_pid = 0;  // the rank's: its watcher
// What the rank receives when its watcher dies (PR_SET_PDEATHSIG).
const int kWatcherGone = SIGRTMIN + 1;

// The rank's line for when its watcher is gone, ready before it is needed (a signal handler may only write).
char g_gone_line[160] = "[fedavg] a rank: its watcher was killed; the rank ends with it\n";
std::size_t g_gone_length = std::strlen(g_gone_line);

extern "C" void watcher_gone(int) {
  ssize_t ignored = ::write(STDERR_FILENO, g_gone_line, g_gone_length);
  (void)ignored;
  ::_exit(1);
}

void prepare_gone_line(pid_t watcher) {
  const std::string who = g_told.rank >= 0 ? "rank " + std::to_string(g_told.rank) + " (" +
                                                 std::string(role_name(static_cast<Role>(g_told.role))) + ")"
                                           : "process " + std::to_string(::getpid()) + " (no rank yet)";
  const std::string line = "[fedavg] " + who + ": its watcher, process " + std::to_string(watcher) +
                           " (the process mpiexec started), was killed; the rank ends with it\n";
  g_gone_length = std::min(line.size(), sizeof g_gone_line);
  std::memcpy(g_gone_line, line.data(), g_gone_length);
}

extern "C" void forward_signal(int signo) {
  if (g_rank_pid > 0) ::kill(g_rank_pid, signo);
}

void send(const Record& r) {
  if (g_to_watcher < 0) return;
  ssize_t n;
  do n = ::write(g_to_watcher, &r, sizeof r);
  while (n < 0 && errno == EINTR);
}

// The rank number mpiexec (MPICH's or Open MPI's) or srun gave, for a rank that died before it could tell.
int launcher_rank() {
  for (const char* name : {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return -1;
}

// Reads what the rank has written to the pipe so far into `last`, its latest record.
void drain(int fd, Record& last) {
  Record r;
  for (;;) {
    const ssize_t n = ::read(fd, &r, sizeof r);
    if (n == static_cast<ssize_t>(sizeof r)) last = r;
    else if (n < 0 && errno == EINTR) continue;
    else break;  // end of file, or nothing more for now (the pipe does not block)
  }
}

std::string host_name() {
  char host[256] = {};
  return ::gethostname(host, sizeof host - 1) == 0 ? std::string(" on host ") + host : std::string();
}

// Prints `what` for the rank `r` names (or the process, before it knew its rank).
void report(const Record& r, const std::string& what) {
  if (r.rank >= 0) log_line({static_cast<int>(r.rank), static_cast<Role>(r.role)}, what);
  else log_process_line("process " + std::to_string(::getpid()) + " (no rank yet)", what);
}

std::string signal_name(int signo) {
  std::string name = std::to_string(signo);
  if (const char* abbrev = ::sigabbrev_np(signo)) name += std::string(" (SIG") + abbrev + ")";
  return name;
}

std::string reason(int signo) {
  std::string what = "killed by signal " + signal_name(signo) + host_name();
  if (signo == SIGKILL) what += ": the out-of-memory killer, or a kill from outside the job";
  return what;
}

// Waits for the rank to end, or to stay stopped by a signal past its stop limit: a stopped rank holds up every
// peer that waits on it, and only its watcher can tell it is stopped rather than slow. Returns its wait status
// when it ends; ends a rank that stays stopped, naming it, and then the watcher (the job ends with it).
int wait_for(pid_t rank, int from_rank, Record& known) {
  using Clock = std::chrono::steady_clock;
  int status = 0;
  bool stopped = false;
  Clock::time_point since;
  for (;;) {
    const pid_t got = ::waitpid(rank, &status, WUNTRACED | WCONTINUED | (stopped ? WNOHANG : 0));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ::_exit(1);
    if (got == 0) {  // still stopped
      drain(from_rank, known);
      const std::chrono::duration<double> held = Clock::now() - since;
      if (held.count() >= known.stop_limit) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } else if (WIFSTOPPED(status)) {
      stopped = true;
      since = Clock::now();
    } else if (WIFCONTINUED(status)) {
      stopped = false;
    } else {
      return status;
    }
  }
  if (!known.reported)
    report(known, "stopped by signal " + signal_name(WSTOPSIG(status)) + host_name() + " for " +
                      std::to_string(static_cast<int>(known.stop_limit)) + " s (" +
                      (known.limit_told ? "half of liveness_seconds"
                                        : "the limit before the settings are read, half of the default "
                                          "liveness_seconds") +
                      "): ended, as every peer that waits on it is held up");
  ::kill(rank, SIGKILL);
  while (::waitpid(rank, &status, 0) < 0 && errno == EINTR) {
  }
  ::_exit(1);
}

// The watcher: waits for the rank and ends as it ended.
// Signals to forward that arrive before it is ready wait, blocked (`before`: the mask to restore).
[[noreturn]] void watch(pid_t rank, int from_rank, const sigset_t& before) {
  g_rank_pid = rank;
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (const int s : kForwarded) ::sigaction(s, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  ::sigprocmask(SIG_SETMASK, &before, nullptr);

  Record known;
  known.rank = launcher_rank();
  const int status = wait_for(rank, from_rank, known);
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  const int signo = WTERMSIG(status);
  drain(from_rank, known);  // the rank is dead: the pipe holds all it will ever hold
  if (!known.reported) report(known, reason(signo));
  // Die as the rank did, so mpiexec reports the same signal; no core file of the watcher.
  const struct rlimit no_core { 0, 0 };
  ::setrlimit(RLIMIT_CORE, &no_core);
  std::signal(signo, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signo);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(signo);
  ::_exit(128 + signo);
}

}  // namespace

void watch_rank() {
  if (const char* v = std::getenv("FEDAVG_RANK_WATCH"); v && std::strcmp(v, "0") == 0) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  // Until the watcher forwards them, the signals it forwards wait.
  sigset_t forwarded, before;
  sigemptyset(&forwarded);
  for (const int s : kForwarded) sigaddset(&forwarded, s);
  ::sigprocmask(SIG_BLOCK, &forwarded, &before);
  const pid_t watcher = ::getpid();
  const pid_t rank = ::fork();
  if (rank > 0) {
    ::close(fds[1]);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    watch(rank, fds[0], before);
  }
  ::sigprocmask(SIG_SETMASK, &before, nullptr);
  ::close(fds[0]);
  if (rank < 0) {  // run unwatched
    ::close(fds[1]);
    return;
  }
  // The rank dies with its watcher, which is what mpiexec kills when it ends the job; it names itself first.
  g_watcher_pid = watcher;
  prepare_gone_line(watcher);
  struct sigaction sa {};
  sa.sa_handler = watcher_gone;
  sigemptyset(&sa.sa_mask);
  ::sigaction(kWatcherGone, &sa, nullptr);
  ::prctl(PR_SET_PDEATHSIG, kWatcherGone);
  if (::getppid() != watcher) ::_exit(1);
  g_to_watcher = fds[1];
}

void tell_watcher(const RankInfo& me) {
  g_told.rank = me.rank;
  g_told.role = static_cast<std::int32_t>(me.role);
  if (g_watcher_pid > 0) prepare_gone_line(g_watcher_pid);
  send(g_told);
}

void tell_watcher_liveness(double liveness_seconds) {
  g_told.stop_limit = static_cast<float>(liveness_seconds / 2);
  g_told.limit_told = 1;
  send(g_told);
}

void tell_watcher_failure_reported() {
  g_told.reported = 1;
  send(g_told);
}

}  // namespace fedavg::core
