#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "comm/error.hpp"
#include "comm/messages.hpp"
#include "comm/tags.hpp"
#include "data/markers.hpp"

using namespace fedavg::comm;

TEST(Messages, ControlRoundTrip) {
  for (auto cmd : {Control::Command::Train, Control::Command::Stop}) {
    for (bool checkpoint : {false, true}) {
      const Control c{cmd, 1234567890123, 3, 400, checkpoint, 250};
      const Control d = Control::decode(c.encode());
      EXPECT_EQ(d.command, cmd);
      EXPECT_EQ(d.round, 1234567890123);
      EXPECT_EQ(d.steps, 3);
      EXPECT_EQ(d.plan, 400);
      EXPECT_EQ(d.checkpoint, checkpoint);
      EXPECT_EQ(d.done, 250);
    }
  }
}

TEST(Messages, ControlRejectsGarbage) {
  EXPECT_THROW(Control::decode({7, 1}), Error);
  EXPECT_THROW(Control::decode({1, -1}), Error);
  EXPECT_THROW(Control::decode({1, 1, 0, 0, 2}), Error);
  EXPECT_THROW(Control::decode({1, 1, 0, 0, 0, -1}), Error);  // negative steps done
}

TEST(Messages, AnswerRoundTrip) {
  for (bool send_state : {false, true}) {
    const Answer r{Control::Command::Train, 42, send_state};
    const Answer d = Answer::decode(r.encode());
    EXPECT_EQ(d.command, Control::Command::Train);
    EXPECT_EQ(d.round, 42);
    EXPECT_EQ(d.send_state, send_state);
  }
  EXPECT_EQ(Answer::decode(Answer{Control::Command::Stop, 3, false}.encode()).command, Control::Command::Stop);
  EXPECT_THROW(Answer::decode({1, 2, 5}), Error);
  EXPECT_THROW(Answer::decode({9, 2, 0}), Error);
}

TEST(Messages, RequestAndCreditRoundTrip) {
  EXPECT_EQ(WindowRequest::decode(WindowRequest{25600}.encode()).windows, 25600);
  EXPECT_EQ(Credit::decode(Credit{4}.encode()).blocks, 4);
  EXPECT_THROW(WindowRequest::decode({0}), Error);
  EXPECT_THROW(Credit::decode({-2}), Error);
}

TEST(Messages, WindowsPayloadChecks) {
  const std::vector<std::int32_t> ok{0, 1, 2, 3, 4, 4, 3, 2, 1, 0};
  EXPECT_EQ(check_windows(ok.data(), ok.size(), 5, 5), 2u);
  EXPECT_THROW(check_windows(ok.data(), 9, 5, 5), Error);          // not whole windows
  EXPECT_THROW(check_windows(ok.data(), ok.size(), 5, 4), Error);  // id 4 outside a vocabulary of 4
  const std::vector<std::int32_t> marker{0, 1, -1, 3, 4};
  EXPECT_THROW(check_windows(marker.data(), marker.size(), 5, 5), Error);
  // Cut windows (empty_slots): -1 fills a context slot, never the target (the middle slot), and no other negative.
  const std::vector<std::int32_t> cut{-1, 1, 2, 3, -1, -1, -1, 0, 1, -1};
  EXPECT_EQ(check_windows(cut.data(), cut.size(), 5, 5, true), 2u);
  EXPECT_THROW(check_windows(cut.data(), cut.size(), 5, 5), Error);
  EXPECT_THROW(check_windows(marker.data(), marker.size(), 5, 5, true), Error);  // -1 as the target
  const std::vector<std::int32_t> above{0, 1, 2, 3, 5};
  EXPECT_THROW(check_windows(above.data(), above.size(), 5, 5, true), Error);  // id 5 outside a vocabulary of 5
  const std::vector<std::int32_t> other{-2, 1, 2, 3, 4};
  EXPECT_THROW(check_windows(other.data(), other.size(), 5, 5, true), Error);
  const std::vector<std::int32_t> lowest{1, 2, std::numeric_limits<std::int32_t>::min()};
  EXPECT_THROW(check_windows(lowest.data(), lowest.size(), 3, 5, true), Error);
}

TEST(Tags, AreUnique) {
  const std::set<int> tags{tag_value(Tag::Tokens),       tag_value(Tag::Windows),     tag_value(Tag::Credit),
                           tag_value(Tag::Request),      tag_value(Tag::Batch),       tag_value(Tag::RoundDone),
                           tag_value(Tag::Ready),        tag_value(Tag::Position),    tag_value(Tag::ResumeFrom),
                           tag_value(Tag::LearnerState), tag_value(Tag::PeriodDone),  tag_value(Tag::Push),
                           tag_value(Tag::Answer),       tag_value(Tag::ElasticStep), tag_value(Tag::Average),
                           tag_value(Tag::Cut),          tag_value(Tag::PassWindows), tag_value(Tag::Shard),
                           tag_value(Tag::ShardDone),    tag_value(Tag::Shutdown),    tag_value(Tag::ShutdownAck)};
  EXPECT_EQ(tags.size(), 21u);
}

TEST(Messages, WindowTotalsRoundTripAndSum) {
  WindowTotals t{300.0, 12.5, 0.1, 1.0, {300.0, 0.0}, 40.0, 0.25};
  const WindowTotals d = WindowTotals::decode(t.encode());
  EXPECT_EQ(d.windows, 300.0);
  EXPECT_EQ(d.loss_sum, 12.5);
  EXPECT_EQ(d.through, 40.0);
  EXPECT_EQ(d.idle_seconds, 0.25);
  EXPECT_EQ(d.pipeline_windows, (std::vector<double>{300.0, 0.0}));
  t += WindowTotals{100.0, 1.5, 0.3, 1.0, {0.0, 100.0}, 2.0, 0.5};
  EXPECT_EQ(t.windows, 400.0);
  EXPECT_EQ(t.through, 42.0);
  EXPECT_EQ(t.idle_seconds, 0.75);
  EXPECT_EQ(t.mean_loss(), 14.0 / 400.0);
  EXPECT_DOUBLE_EQ(t.mean_lr(), 0.2);
  EXPECT_EQ(t.pipeline_windows, (std::vector<double>{300.0, 100.0}));
  EXPECT_TRUE(std::isnan(WindowTotals{}.mean_loss()));
  EXPECT_TRUE(std::isnan(WindowTotals{}.mean_lr()));
  EXPECT_THROW(WindowTotals::decode({1.0, 2.0, 3.0, 4.0, 5.0}), Error);
}

TEST(Markers, AreNegativeAndDistinct) {
  using namespace fedavg::data;
  EXPECT_LT(kBreak, 0);
  EXPECT_LT(kOov, 0);
  EXPECT_LT(kEof, 0);
  EXPECT_NE(kBreak, kOov);
  EXPECT_NE(kOov, kEof);
  EXPECT_NE(kBreak, kEof);
}

TEST(Messages, ShardGrantAndDoneRoundTrip) {
  const fedavg::comm::ShardGrant g{3, 1, 100, 250, 2, 8};
  const auto back = fedavg::comm::ShardGrant::decode(g.encode());
  EXPECT_EQ(back.shard, 3);
  EXPECT_EQ(back.file, 1);
  EXPECT_EQ(back.begin, 100);
  EXPECT_EQ(back.end, 250);
  EXPECT_EQ(back.epoch, 2);
  EXPECT_EQ(back.ahead, 8);
  EXPECT_THROW(fedavg::comm::ShardGrant::decode({0, 0, 10, 10, 0, 2}), fedavg::comm::Error);
  EXPECT_THROW(fedavg::comm::ShardGrant::decode({0, 0, 10, 20, 0, 0}), fedavg::comm::Error);
  const auto done = fedavg::comm::ShardDone::decode(fedavg::comm::ShardDone{3, 2}.encode());
  EXPECT_EQ(done.shard, 3);
  EXPECT_EQ(done.epoch, 2);
  EXPECT_THROW(fedavg::comm::ShardDone::decode({-1, 0}), fedavg::comm::Error);
}
