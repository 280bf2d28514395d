#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/rank_map.hpp"

using fedavg::core::RankMap;
using fedavg::core::Role;

TEST(RankMap, OnePipelineTwoLearners) {
  const RankMap m(6, 1);
  EXPECT_EQ(m.learners(), 2);
  EXPECT_EQ(m.role_of(0), Role::Dispatcher);
  EXPECT_EQ(m.role_of(1), Role::Tokenizer);
  EXPECT_EQ(m.role_of(2), Role::Filter);
  EXPECT_EQ(m.role_of(3), Role::Batcher);
  EXPECT_EQ(m.role_of(4), Role::Learner);
  EXPECT_EQ(m.role_of(5), Role::Learner);
  EXPECT_EQ(m.learners_of(0), (std::vector<int>{4, 5}));
}

TEST(RankMap, LearnerReadsPipelineLModP) {
  const RankMap m(12, 2);  // 1 + 6 pipeline ranks + 5 learners
  EXPECT_EQ(m.learners(), 5);
  EXPECT_EQ(m.role_of(4), Role::Tokenizer);
  EXPECT_EQ(m.role_of(5), Role::Filter);
  EXPECT_EQ(m.role_of(6), Role::Batcher);
  EXPECT_EQ(m.role_of(7), Role::Learner);
  EXPECT_EQ(m.learner_index(7), 0);
  EXPECT_EQ(m.pipeline_of_learner(3), 1);
  EXPECT_EQ(m.batcher(m.pipeline_of_learner(m.learner_index(8))), 6);
  EXPECT_EQ(m.learners_of(0), (std::vector<int>{7, 9, 11}));
  EXPECT_EQ(m.learners_of(1), (std::vector<int>{8, 10}));
  EXPECT_EQ(m.pipeline_of_stage(5), 1);
}

TEST(RankMap, TooFewRanksNamesTheSmallestWorkingCount) {
  EXPECT_EQ(RankMap::min_world_size(1), 5);
  EXPECT_EQ(RankMap::min_world_size(3), 13);
  try {
    RankMap m(8, 2);
    FAIL() << "expected an error";
  } catch (const fedavg::core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("at least -n 9, or read the same files through fewer pipelines "
                                         "(--pipelines 1 fits -n 8)"),
              std::string::npos)
        << e.what();
  }
  try {
    RankMap m(4, 1);
    FAIL() << "expected an error";
  } catch (const fedavg::core::InputError& e) {
    EXPECT_EQ(std::string(e.what()).find("fewer pipelines"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(RankMap(9, 2));
}

TEST(RankMap, NoCorpusIsAnError) { EXPECT_THROW(RankMap(5, 0), fedavg::core::InputError); }

TEST(RankMap, ItsJsonGivesEveryRanksRoleHostAndPipeline) {
  const RankMap m(10, 2);  // 1 + 6 pipeline ranks + 3 learners
  const std::vector<std::string> hosts{"h0", "h0", "h0", "h0", "h1", "h1", "h1", "h2", "h2", "h2"};
  const std::string text = m.to_json(hosts);
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["world_size"], 10);
  EXPECT_EQ(j["pipelines"], 2);
  ASSERT_EQ(j["ranks"].size(), 10u);
  EXPECT_EQ(j["ranks"][0], (nlohmann::json{{"rank", 0}, {"role", "Dispatcher"}, {"host", "h0"}}));
  EXPECT_EQ(j["ranks"][5], (nlohmann::json{{"rank", 5}, {"role", "Filter"}, {"host", "h1"}, {"pipeline", 1}}));
  EXPECT_EQ(j["ranks"][8],
            (nlohmann::json{{"rank", 8}, {"role", "Learner"}, {"host", "h2"}, {"learner", 1}, {"pipeline", 1}}));
  // One rank a line.
  EXPECT_NE(text.find("\n    {\"rank\":9,\"role\":\"Learner\",\"host\":\"h2\",\"learner\":2,\"pipeline\":0}\n"),
            std::string::npos)
      << text;
}
