// The job's topology (training/collectives/topology.hpp) and the run plan worked out from the settings on it
// (training/run_plan.hpp): the host ids the learner communicator would give, the batches each learner trains a
// round, whether a host's learners share the weights, and combine add's power.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/rank_map.hpp"
#include "core/settings.hpp"
#include "training/collectives/topology.hpp"
#include "training/run_plan.hpp"
#include "training/strategy.hpp"

using fedavg::core::parse_settings;
using fedavg::training::RunPlan;
using fedavg::training::Topology;

namespace {

// Learners on `hosts` (a host id per learner), the Dispatcher on the first learner's host.
Topology placed(const std::vector<int>& hosts) {
  std::vector<int> by_rank{hosts.front()};
  by_rank.insert(by_rank.end(), hosts.begin(), hosts.end());
  return Topology(by_rank);
}

// The plan for `s` on `hosts`, with the traits of the strategy it names; add_power not given.
RunPlan plan(const fedavg::core::Settings& s, const std::vector<int>& hosts) {
  return RunPlan::of(s, placed(hosts), {}, fedavg::training::Strategy::traits(s));
}

// The plan for the cfg.json text `json` on `hosts`, with the keys that depend on the topology given where `json`
// names them.
RunPlan plan_of(const std::string& json, const std::vector<int>& hosts) {
  const auto s = parse_settings(json, "cfg.json");
  const auto named = [&](const char* key) { return json.find('"' + std::string(key) + '"') != std::string::npos; };
  return RunPlan::of(s, placed(hosts),
                     {named("add_power"), named("combine"), named("add_bpe"), named("sparse_rows"), named("overlap"),
                      named("sparse_values")},
                     fedavg::training::Strategy::traits(s));
}

int learner_bpe(const fedavg::core::Settings& s, const std::vector<int>& hosts) { return plan(s, hosts).learner_bpe; }

}  // namespace

TEST(Topology, OfTheWorldGivesTheLearnerCommunicatorsHostIds) {
  // One pipeline (ranks 1-3) and three learners (ranks 4-6): the Dispatcher and learner 1 on one host, the
  // pipeline and learners 0 and 2 on another. A member's host is the learner-communicator rank of the lowest
  // member on it: the pipeline ranks are not members.
  const fedavg::core::RankMap map(7, 1);
  const Topology t = Topology::of_world({0, 1, 1, 1, 1, 0, 1}, map);
  EXPECT_EQ(t.hosts(), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(t.learner_hosts(), (std::vector<int>{1, 0, 1}));
  EXPECT_FALSE(t.one_host());
  EXPECT_EQ(t.learners_by_host(4), (std::vector<std::vector<int>>{{1, 3}, {2}}));
  EXPECT_EQ(t.learners_on_host(3, 4), 2);
  EXPECT_EQ(t.learners_on_host(2, 4), 1);
  EXPECT_EQ(t.learners_on_host(0, 4), 1);
  EXPECT_TRUE(t.some_host_has_several(4));
  EXPECT_EQ(t.local_rank(3), 1);
  EXPECT_EQ(t.local_rank(2), 1);
  EXPECT_TRUE(Topology::of_world({0, 0, 0, 0, 0}, fedavg::core::RankMap(5, 1)).one_host());
}

TEST(RunPlan, CombineAddTrainsAddBpeBatchesWithSeveralMembersOfTheExchange) {
  const std::string base = R"({"data_name": "x", "bpe": 200, "bs": 1, "target": 1)";
  const std::vector<int> one{0}, eight_apart{0, 1, 2, 3, 4, 5, 6, 7}, eight_on_one(8, 0),
      two_of_four{0, 0, 0, 0, 1, 1, 1, 1};
  const auto plain = parse_settings(base + "}", "cfg.json");
  EXPECT_EQ(learner_bpe(plain, one), 200);          // one learner trains as before
  EXPECT_EQ(learner_bpe(plain, eight_apart), 1);    // eight hosts of one learner: add_bpe
  EXPECT_EQ(learner_bpe(plain, eight_on_one), 25);  // one host: its 8 learners share the round's 200 batches
  // Hosts with fixed rounds (the default) add their changes: 8 batches a learner over the hosts (2 hosts: 4 each, 4
  // hosts: 2, from 8 hosts: 1), or add_bpe given, shared.
  EXPECT_EQ(learner_bpe(plain, two_of_four), 4);
  EXPECT_EQ(learner_bpe(plain, {0, 0, 1, 1, 2, 2, 3, 3}), 2);
  EXPECT_EQ(learner_bpe(plain, {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7}), 1);
  EXPECT_EQ(learner_bpe(plain, {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8}), 1);
  EXPECT_EQ(plan_of(base + R"(, "add_bpe": 8})", two_of_four).learner_bpe, 2);
  EXPECT_EQ(plan_of(base + R"(, "add_bpe": 0})", two_of_four).learner_bpe, 50);  // bpe, shared
  // Link-sized rounds average: from bpe, shared.
  EXPECT_EQ(learner_bpe(parse_settings(base + R"(, "exchange_share": 0.1})", "cfg.json"), two_of_four), 50);
  const auto own_copies = parse_settings(base + R"(, "share_host": false})", "cfg.json");
  EXPECT_EQ(learner_bpe(own_copies, eight_on_one), 1);
  EXPECT_EQ(learner_bpe(parse_settings(base + R"(, "combine": "average"})", "cfg.json"), eight_apart), 200);
  EXPECT_EQ(learner_bpe(parse_settings(base + R"(, "combine": "average"})", "cfg.json"), eight_on_one), 25);
  EXPECT_EQ(learner_bpe(parse_settings(base + R"(, "add_bpe": 0, "share_host": false})", "cfg.json"), eight_on_one),
            200);
  EXPECT_EQ(learner_bpe(parse_settings(base + R"(, "strategy": "hogwild"})", "cfg.json"), eight_on_one), 200);
  EXPECT_TRUE(plan(plain, two_of_four).shares_hosts);
  EXPECT_FALSE(plan(plain, eight_apart).shares_hosts);
  EXPECT_FALSE(plan(own_copies, two_of_four).shares_hosts);
  EXPECT_FALSE(plan(parse_settings(base + R"(, "strategy": "easgd"})", "cfg.json"), two_of_four).shares_hosts);
  EXPECT_EQ(plan(plain, two_of_four).add_power, fedavg::training::kHostAddPower);  // hosts add
  EXPECT_EQ(plan(plain, eight_apart).add_power, 0.6);                              // single learners add
  EXPECT_EQ(plan(own_copies, two_of_four).add_power, 0.6);
  // Given, it is kept.
  const auto given = parse_settings(base + R"(, "add_power": 0.9})", "cfg.json");
  EXPECT_EQ(RunPlan::of(given, placed(two_of_four), {true, false}, fedavg::training::Strategy::traits(given)).add_power,
            0.9);
}

TEST(RunPlan, HogwildKeepsTheWeightsOnTheCpuAndAWindowCountFollowsTheLearnersBatches) {
  const auto hogwild = parse_settings(
      R"({"data_name": "x", "bpe": 10, "bs": 32, "target": 1, "strategy": "hogwild", "device": "cuda"})", "cfg.json");
  EXPECT_TRUE(plan(hogwild, {0, 0}).cpu_only);
  EXPECT_EQ(hogwild.device, "cuda");  // the settings stay as written
  const auto fedavg = parse_settings(R"({"data_name": "x", "bpe": 10, "bs": 32, "target": 1})", "cfg.json");
  EXPECT_FALSE(plan(fedavg, {0, 0}).cpu_only);
  // Two learners sharing a host's weights each train half of a round's 10 batches.
  EXPECT_EQ(plan(fedavg, {0, 0}).windows_per_round(fedavg), 5 * 32);
  EXPECT_EQ(plan(fedavg, {0}).windows_per_round(fedavg), 10 * 32);
  EXPECT_EQ(fedavg.bpe, 10);
}

TEST(RunPlan, RoundsAreSizedByTheLinkOnlyWhereHostsOfSharingLearnersAreTheMembers) {
  const std::string base = R"({"data_name": "x", "bpe": 200, "bs": 1, "target": 1)";
  const std::string sized = base + R"(, "exchange_share": 0.1)";
  const auto plain = parse_settings(sized + "}", "cfg.json");
  EXPECT_TRUE(plan(plain, {0, 0, 1, 1}).link_sized_rounds);
  EXPECT_FALSE(plan(plain, {0, 0, 0, 0}).link_sized_rounds);  // one host: no exchange to pay for
  EXPECT_FALSE(plan(plain, {0, 1, 2, 3}).link_sized_rounds);  // single learners: fixed rounds, replayable
  EXPECT_FALSE(plan(parse_settings(sized + R"(, "share_host": false})", "cfg.json"), {0, 0, 1, 1}).link_sized_rounds);
  EXPECT_FALSE(plan(parse_settings(base + "}", "cfg.json"), {0, 0, 1, 1}).link_sized_rounds);  // the default
  EXPECT_FALSE(plan(parse_settings(sized + R"(, "strategy": "easgd"})", "cfg.json"), {0, 0, 1, 1}).link_sized_rounds);
  // Their changes are averaged unless combine is given; elsewhere combine stays as it is.
  using fedavg::core::Combine;
  EXPECT_EQ(plan(plain, {0, 0, 1, 1}).combine, Combine::Average);
  EXPECT_EQ(plan(plain, {0, 1, 2, 3}).combine, Combine::Add);
  EXPECT_EQ(plan(plain, {0, 0, 0, 0}).combine, Combine::Add);
  EXPECT_EQ(plan(parse_settings(base + "}", "cfg.json"), {0, 0, 1, 1}).combine, Combine::Add);
  const auto add = parse_settings(sized + R"(, "combine": "add"})", "cfg.json");
  EXPECT_EQ(RunPlan::of(add, placed({0, 0, 1, 1}), {false, true}, fedavg::training::Strategy::traits(add)).combine,
            Combine::Add);
}

TEST(RunPlan, FedavgsHostsTrainOnThroughTheExchangeByDefaultWhereTheyAddTheirChanges) {
  const std::string base = R"({"data_name": "x", "bpe": 200, "bs": 1, "target": 1)";
  const std::vector<int> two_hosts{0, 0, 1, 1};
  EXPECT_TRUE(plan_of(base + "}", two_hosts).overlap);
  EXPECT_FALSE(plan_of(base + R"(, "overlap": false})", two_hosts).overlap);
  EXPECT_TRUE(plan_of(base + R"(, "overlap": true})", two_hosts).overlap);
  // A fixed rotation of the batches waits for every learner in turn, and so for a host's leader as it exchanges.
  EXPECT_FALSE(plan_of(base + R"(, "fixed_batch_order": true})", two_hosts).overlap);
  EXPECT_FALSE(plan_of(base + "}", {0, 1, 2, 3}).overlap);  // single learners
  EXPECT_FALSE(plan_of(base + R"(, "share_host": false})", two_hosts).overlap);
  // Link-sized rounds: only where overlap is given.
  const std::string sized = base + R"(, "exchange_share": 0.1)";
  EXPECT_FALSE(plan_of(sized + "}", two_hosts).overlap);
  EXPECT_TRUE(plan_of(sized + R"(, "overlap": true})", two_hosts).overlap);
  // bmuf and diloco open every round with the Dispatcher's weights; bsp keeps its replicas identical.
  for (const char* other : {"bsp", "bmuf", "diloco"}) {
    EXPECT_FALSE(plan_of(base + R"(, "strategy": ")" + other + R"("})", two_hosts).overlap) << other;
    EXPECT_FALSE(plan_of(sized + R"(, "overlap": true, "strategy": ")" + other + R"("})", two_hosts).overlap) << other;
  }
}

TEST(RunPlan, OneHostsLearnersTrainOnThroughItsRoundsCloseByDefault) {
  const std::string base = R"({"data_name": "x", "bpe": 200, "bs": 1, "target": 1)";
  const std::vector<int> one_host{0, 0, 0, 0};
  EXPECT_TRUE(plan_of(base + "}", one_host).overlap);
  EXPECT_FALSE(plan_of(base + "}", one_host).hosts_add);  // one member: nothing to add
  EXPECT_FALSE(plan_of(base + R"(, "overlap": false})", one_host).overlap);
  EXPECT_FALSE(plan_of(base + R"(, "fixed_batch_order": true})", one_host).overlap);
  EXPECT_FALSE(plan_of(base + "}", {0}).overlap);  // one learner: nothing shared
  // Learners of several pipelines: their uneven shares of the batches would read the pipelines unevenly.
  const auto settings = parse_settings(base + "}", "cfg.json");
  EXPECT_FALSE(RunPlan::of(settings, placed(one_host), {}, fedavg::training::Strategy::traits(settings), 2).overlap);
  EXPECT_TRUE(RunPlan::of(settings, placed(one_host), {}, fedavg::training::Strategy::traits(settings), 1).overlap);
  EXPECT_FALSE(plan_of(base + R"(, "share_host": false})", one_host).overlap);
  for (const char* other : {"bsp", "bmuf", "diloco"})
    EXPECT_FALSE(plan_of(base + R"(, "strategy": ")" + other + R"("})", one_host).overlap) << other;
}

TEST(RunPlan, HostsThatAddTheirChangesSendTheirLargestRowsUnlessSparseRowsIsGiven) {
  const std::string base = R"({"data_name": "x", "bpe": 200, "bs": 1, "target": 1)";
  const std::vector<int> two_hosts{0, 0, 1, 1};
  EXPECT_TRUE(plan_of(base + "}", two_hosts).hosts_add);
  EXPECT_EQ(plan_of(base + "}", two_hosts).sparse_rows, fedavg::training::kHostSparseRows);
  EXPECT_EQ(plan_of(base + R"(, "sparse_rows": 0.5})", two_hosts).sparse_rows, 0.5);
  EXPECT_EQ(plan_of(base + R"(, "sparse_rows": 1})", two_hosts).sparse_rows, 1.0);
  // Elsewhere every changed row: one host, single learners as members, hosts that average over link-sized rounds.
  EXPECT_EQ(plan_of(base + "}", {0, 0, 0, 0}).sparse_rows, 1.0);
  EXPECT_EQ(plan_of(base + "}", {0, 1, 2, 3}).sparse_rows, 1.0);
  EXPECT_EQ(plan_of(base + R"(, "share_host": false})", two_hosts).sparse_rows, 1.0);
  const auto sized = plan_of(base + R"(, "exchange_share": 0.1})", two_hosts);
  EXPECT_FALSE(sized.hosts_add);
  EXPECT_EQ(sized.sparse_rows, 1.0);
  EXPECT_FALSE(plan_of(base + R"(, "combine": "average"})", two_hosts).hosts_add);
  EXPECT_EQ(plan_of(base + R"(, "combine": "average"})", two_hosts).sparse_rows, 1.0);
}

TEST(RunPlan, HostsThatAddTheirChangesSendAByteAValueUnlessSparseValuesIsGiven) {
  using fedavg::core::ExchangeType;
  const std::string base = R"({"data_name": "x", "bpe": 200, "bs": 1, "target": 1)";
  const std::vector<int> two_hosts{0, 0, 1, 1};
  EXPECT_EQ(plan_of(base + "}", two_hosts).sparse_values, ExchangeType::Int8);
  EXPECT_EQ(plan_of(base + R"(, "sparse_values": "float16"})", two_hosts).sparse_values, ExchangeType::Float16);
  EXPECT_EQ(plan_of(base + R"(, "sparse_values": "float32"})", two_hosts).sparse_values, ExchangeType::Float32);
  // Elsewhere the Settings default: one host, single learners as members, hosts that average over link-sized rounds.
  EXPECT_EQ(plan_of(base + "}", {0, 0, 0, 0}).sparse_values, ExchangeType::Float16);
  EXPECT_EQ(plan_of(base + "}", {0, 1, 2, 3}).sparse_values, ExchangeType::Float16);
  EXPECT_EQ(plan_of(base + R"(, "exchange_share": 0.1})", two_hosts).sparse_values, ExchangeType::Float16);
  EXPECT_EQ(plan_of(base + R"(, "sparse_values": "bfloat16"})", {0, 0, 0, 0}).sparse_values, ExchangeType::BFloat16);
}
