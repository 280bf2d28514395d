// What a run does with the settings as the user wrote them on the job's topology, worked out once in job setup
// (settle_config): whether a host's learners share one copy of the weights, the batches each learner trains a
// round, and combine add's power.
#pragma once

#include <cstdint>

#include "core/settings.hpp"
#include "training/collectives/topology.hpp"

namespace fedavg::training {

// add_power where the user does not give it and the members of the exchange are hosts whose learners share the
// weights (a host's change is its learners' steps in turn, so the hosts' changes agree more than single
// learners' do).
inline constexpr double kHostAddPower = 0.5;

// Where hosts whose learners share the weights add their changes over fixed rounds (the default across hosts):
// the batches per learner of a round's H hosts together where add_bpe is not given (each learner trains
// kHostsBatchesPerLearner / H, at least 1), and the fraction of each table's rows a host sends a round, largest
// changes first, where sparse_rows is not given, and their values, where sparse_values is not given. The hosts'
// added change moves a row by up to the sum of theirs where they disagree, so the rounds shorten as the hosts
// grow: on the Bible 4 hosts of 2 learners diverged at 4 batches per learner and reached the target at 2. Short
// rounds keep the windows per learner near one host's; the largest 5 % of the rows, a byte per value, keep each
// round's message small for a 1 Gbit link (docs/strategies.md, across hosts).
inline constexpr int kHostsBatchesPerLearner = 8;
inline constexpr double kHostSparseRows = 0.05;
inline constexpr core::ExchangeType kHostSparseValues = core::ExchangeType::Int8;

// What the run plan needs to know of a strategy (Strategy::traits): whether it runs lock-step rounds (the only
// ones the sparse exchange applies to), whether it adds the members' changes (fedavg's combine add), and whether
// its learners train one copy in the host's shared memory (hogwild: then every model runs on the CPU).
struct StrategyTraits {
  bool lock_step = false;
  bool adds = false;
  bool host_memory = false;
  bool trains_through = false;  // its exchange may run on a copy while the host trains on (fedavg)
};

// The settings the user gave (cfg.json or the command line) rather than left at their defaults, where the plan's
// default depends on the topology.
struct GivenSettings {
  bool add_power = false;
  bool combine = false;
  bool add_bpe = false;
  bool sparse_rows = false;
  bool overlap = false;
  bool sparse_values = false;
};

struct RunPlan {
  // The learners of a host share one copy of the weights: share_host is set, the strategy is lock-step and some
  // host has several learners.
  bool shares_hosts = false;
  // The batches each learner trains per round. A round is add_bpe batches where fedavg adds the changes of several
  // members of the exchange (their sum is stable only over short rounds), else bpe; the members are the learners,
  // or the hosts where their learners share the weights, and then a host's learners divide the round's batches
  // among them (add_bpe not given: kHostsBatchesPerLearner / H each). One learner trains bpe either way.
  int learner_bpe = 0;
  // Rounds grow from learner_bpe until what is not training is at most exchange_share of a round (RoundLength):
  // where exchange_share is above 0 and the members of a lock-step exchange are several hosts whose learners share
  // the weights. Otherwise rounds are fixed: added changes are stable only over short rounds, and a fixed seed
  // replays them.
  bool link_sized_rounds = false;
  // The sparse exchange's fraction of each table's rows a member sends a round: sparse_rows as given, else
  // kHostSparseRows where hosts add their changes (hosts_add), else the Settings default.
  double sparse_rows = 1.0;
  // The values the sparse exchange sends: sparse_values as given, else kHostSparseValues where hosts_add, else the
  // Settings default.
  core::ExchangeType sparse_values = core::ExchangeType::Float16;
  // The members of the exchange are several hosts whose learners share the weights, and they add their changes
  // over fixed rounds (the default across hosts).
  bool hosts_add = false;
  // How fedavg combines the members' changes: `combine` as given; where it is not given and rounds are link-sized,
  // the average: over rounds of many batches each host's change is a long walk of its own, and adding them
  // overshoots (docs/strategies.md, link-sized rounds).
  core::Combine combine = core::Combine::Add;
  // combine add's power: add_power as given, else kHostAddPower where shares_hosts, else the Settings default.
  double add_power = 0.0;
  // A host's learners train on through their leader's exchange (overlap), sharing each round's batches
  // (HostBatches): fedavg's hosts, by default where they add their changes over fixed rounds (hosts_add) and on one
  // host whose learners share the weights and read one pipeline (not with fixed_batch_order, whose rotation waits
  // for every learner in turn), and with link-sized rounds where overlap is given true. (A host's learners train
  // uneven shares of its batches, so learners of several pipelines would read them at uneven rates.) The sparse
  // exchange works on the shared weights in place, and so does one host's (its leader only sends them); the dense
  // one across hosts on a copy, whose change the leader then adds to them.
  bool overlap = false;
  // The models run on the CPU whatever `device` says: the weights live in the host's shared memory.
  bool cpu_only = false;

  // The windows each learner trains a round: learner_bpe batches of bs.
  std::int64_t windows_per_round(const core::Settings& s) const {
    return static_cast<std::int64_t>(learner_bpe) * s.bs;
  }

  // For settings `s` (`given`: those the user set) of a strategy with `traits`, with the learners
  // placed as `topology` says, reading `pipelines` pipelines (learner l reads l mod pipelines, core::RankMap).
  static RunPlan of(const core::Settings& s, const Topology& topology, const GivenSettings& given,
                    const StrategyTraits& traits, int pipelines = 1);
};

}  // namespace fedavg::training
