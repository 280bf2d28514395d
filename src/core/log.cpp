#include "core/log.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "core/rank_watch.hpp"

namespace fedavg::core {
namespace {

// One write(2) per message, so lines from many ranks never interleave and an abort right after cannot cut
// a message in half.
void write_line(int fd, std::string line) {
  if (line.empty() || line.back() != '\n') line.push_back('\n');
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void emit(const RankInfo& me, std::string_view sep, std::string_view msg) {
  std::string line = "[fedavg] rank " + std::to_string(me.rank) + " (" + std::string(role_name(me.role)) + ")";
  line.append(sep).append(msg);
  write_line(STDERR_FILENO, std::move(line));
}

}  // namespace

void note(const RankInfo& me, std::string_view msg) {
  std::string line = "fedavg_mpi: " + std::string(role_name(me.role)) + " rank " + std::to_string(me.rank) + ": ";
  line.append(msg);
  write_line(STDOUT_FILENO, std::move(line));
}

void log_line(const RankInfo& me, std::string_view msg) { emit(me, ": ", msg); }

void log_failure(const RankInfo& me, std::string_view reason) {
  std::fflush(stdout);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stderr);
  log_line(me, reason);
  tell_watcher_failure_reported();
}

void warn(const RankInfo& me, std::string_view msg) { emit(me, " WARNING: ", msg); }

void log_process_line(std::string_view who, std::string_view msg) {
  std::string line = "[fedavg] ";
  line.append(who).append(": ").append(msg);
  write_line(STDERR_FILENO, std::move(line));
}

}  // namespace fedavg::core
