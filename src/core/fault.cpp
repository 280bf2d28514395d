#include "core/fault.hpp"

#include <csignal>
#include <cstdlib>

#include "core/error.hpp"

namespace fedavg::core {
namespace {

template <typename Bad> Fault pause(Fault f, const std::string& seconds, const Bad& bad) {
  std::size_t used = 0;
  try {
    f.seconds = std::stod(seconds, &used);
  } catch (const std::logic_error&) {
    throw bad("pause needs a number of seconds");
  }
  if (used != seconds.size() || !(f.seconds >= 0.0 && f.seconds <= 86400.0))
    throw bad("pause needs a number of seconds from 0 to 86400");
  f.kind = Fault::Kind::Pause;
  return f;
}

}  // namespace

Fault parse_fault(const std::string& spec) {
  const auto bad = [&](const std::string& why) {
    return InputError("command line: --inject-fault " + spec + ": " + why +
                      " (expected RANK:ROUND:KIND, KIND one of exception, kill, crash, hang, kill_in_checkpoint, " +
                      "pause=SECONDS)");
  };
  const auto a = spec.find(':');
  const auto b = a == std::string::npos ? a : spec.find(':', a + 1);
  if (b == std::string::npos) throw bad("needs three fields");
  Fault f;
  try {
    std::size_t used = 0;
    f.rank = std::stoi(spec.substr(0, a), &used);
    if (used != a) throw bad("RANK is not a number");
    f.round = std::stol(spec.substr(a + 1, b - a - 1), &used);
    if (used != b - a - 1) throw bad("ROUND is not a number");
  } catch (const std::logic_error&) {
    throw bad("RANK and ROUND must be numbers");
  }
  if (f.rank < 0 || f.round < 0) throw bad("RANK and ROUND must not be negative");
  const std::string kind = spec.substr(b + 1);
  if (kind == "exception") f.kind = Fault::Kind::Exception;
  else if (kind == "kill") f.kind = Fault::Kind::Kill;
  else if (kind == "crash") f.kind = Fault::Kind::Crash;
  else if (kind == "hang") f.kind = Fault::Kind::Hang;
  else if (kind == "kill_in_checkpoint") f.kind = Fault::Kind::KillInCheckpoint;
  else if (kind.rfind("pause=", 0) == 0) f = pause(f, kind.substr(6), bad);
  else throw bad("unknown KIND \"" + kind + "\"");
  return f;
}

void check_faults(const std::vector<Fault>& faults, int world_size) {
  for (const auto& f : faults)
    if (f.rank >= world_size)
      throw InputError("command line: --inject-fault names rank " + std::to_string(f.rank) + " but the job has " +
                       std::to_string(world_size) + " ranks");
}

void die_now() {
  std::raise(SIGKILL);
  std::abort();
}

void crash_now() {
  volatile int* nowhere = nullptr;
  *nowhere = 1;
  std::abort();  // not reached
}

}  // namespace fedavg::core
