#include "core/hooks.hpp"

#include <thread>

#include "core/error.hpp"
#include "core/log.hpp"

namespace fedavg::core {
namespace {

double slow_factor_of(const Config& cfg, const RankMap& map, const RankInfo& me) {
  const bool slowed = me.role == Role::Learner && map.learner_index(me.rank) < cfg.settings.slow_learners;
  return slowed ? cfg.settings.slow_factor : 1.0;
}

}  // namespace

Hooks::Hooks(const std::vector<Fault>& faults, const RankInfo& me, double slow_factor)
    : me_(me), slow_factor_(slow_factor) {
  for (const auto& f : faults)
    if (f.rank == me.rank) mine_.push_back(f);
}

Hooks::Hooks(const Config& cfg, const RankMap& map, const RankInfo& me)
    : Hooks(cfg.faults, me, slow_factor_of(cfg, map, me)) {}

void Hooks::reached(long round) {
  const long from = reached_ < 0 ? round : reached_ + 1;
  if (round > reached_) reached_ = round;
  for (long r = from; r <= round; ++r) {
    for (const auto& f : mine_) {
      if (f.round != r) continue;
      switch (f.kind) {
        case Fault::Kind::Exception:
          throw Error("injected fault: exception at round " + std::to_string(r) + " (--inject-fault)");
        case Fault::Kind::Kill: warn(me_, "injected fault: killing this rank at round " + std::to_string(r)); die_now();
        case Fault::Kind::Crash: warn(me_, "injected fault: crashing at round " + std::to_string(r)); crash_now();
        case Fault::Kind::Hang:
          warn(me_, "injected fault: hanging at round " + std::to_string(r));
          for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
        case Fault::Kind::Pause:
          warn(me_, "injected fault: pausing " + std::to_string(f.seconds) + " s at round " + std::to_string(r));
          std::this_thread::sleep_for(std::chrono::duration<double>(f.seconds));
          break;
        case Fault::Kind::KillInCheckpoint: break;
      }
    }
  }
}

void Hooks::step_took(std::chrono::steady_clock::duration step) const {
  if (slow_factor_ > 1.0) std::this_thread::sleep_for(step * (slow_factor_ - 1.0));
}

bool Hooks::kill_in_checkpoint(long round) const {
  for (const auto& f : mine_)
    if (f.round == round && f.kind == Fault::Kind::KillInCheckpoint) return true;
  return false;
}

}  // namespace fedavg::core
