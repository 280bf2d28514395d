// core::CheckpointWriter: a checkpoint written in the background holds the state as it was when write() was
// called (the run goes on changing it), runs its follow-up once the file is in place, equals one written inline,
// a write that fails reports its error at the next wait(), and finish() waits and lets a later write start afresh.
// A write that runs out of room says why, leaves no half-written file and keeps the checkpoint before.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/checkpoint_writer.hpp"
#include "core/error.hpp"

namespace fs = std::filesystem;
using fedavg::core::CheckpointWriter;

namespace {

fs::path fresh_dir() {
  const auto d = fs::temp_directory_path() / ("fedavg_checkpoint_writer_" + std::to_string(std::random_device{}()));
  fs::create_directories(d);
  return d;
}

// A learner state as engine.get_state writes it (python/runtime/state_codec.py): a safetensors header that holds
// the state's JSON, here the number 7, and no arrays.
std::vector<std::uint8_t> learner_state() {
  const std::string header = R"({"__metadata__":{"fedavg_state":"7","fedavg_kinds":"[]"}})";
  std::vector<std::uint8_t> bytes(8 + header.size(), 0);
  bytes[0] = static_cast<std::uint8_t>(header.size());
  std::copy(header.begin(), header.end(), bytes.begin() + 8);
  return bytes;
}

// A run's state: a 3 x 4 table, one learner state, one read position.
struct State {
  std::vector<float> table = std::vector<float>(12);
  std::vector<fedavg::core::NamedArray> arrays;
  fedavg::core::CheckpointInfo info;
  std::vector<std::vector<std::uint8_t>> learner_states{learner_state()};
  std::vector<fedavg::core::ReadPosition> positions{{7, 1}};
  std::vector<float> strategy_state;
  std::vector<std::string> vocabulary{"a", "b", "c"};
  std::vector<fedavg::core::PipelineProgress> progress{{100.0, 200.0}};
  std::vector<std::string> restarts;
  std::vector<fedavg::core::ShardProgress> shards;
  std::vector<fedavg::core::CorpusSummary> corpora{{4096, 12345}, {-1, 0}};

  explicit State(float base) {
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = base + static_cast<float>(i);
    arrays.push_back({"embedding", {3, 4}, table.data()});
    info.round = static_cast<std::int64_t>(base);
    info.data_name = "toy";
    info.strategy = "fedavg";
  }
  fedavg::core::CheckpointContent content() const {
    return {arrays, info, learner_states, positions, strategy_state, vocabulary, progress, restarts, shards, corpora};
  }
};

fedavg::core::Checkpoint read(const fs::path& p) { return fedavg::core::read_checkpoint(p, {{"embedding", 12}}); }

}  // namespace

TEST(CheckpointWriter, ABackgroundWriteHoldsTheStateOfItsCallAndEqualsAnInlineOne) {
  const auto dir = fresh_dir();
  State state(5.0f);
  bool then_ran = false;
  CheckpointWriter background(true);
  background.write(dir / "bg.h5", state.content(), false, [&] { then_ran = fs::exists(dir / "bg.h5"); });
  // The run goes on: round 6 changes the weights while round 5's checkpoint is written.
  State later(6.0f);
  state.table = later.table;
  state.info.round = 6;
  background.wait();
  EXPECT_TRUE(then_ran);
  const auto got = read(dir / "bg.h5");
  EXPECT_EQ(got.info.round, 5);
  EXPECT_EQ(got.arrays.at(0), State(5.0f).table);
  EXPECT_EQ(got.learner_states.at(0), learner_state());
  ASSERT_EQ(got.corpora.size(), 2u);
  EXPECT_EQ(got.corpora[0].bytes, 4096);
  EXPECT_EQ(got.corpora[0].hash, 12345);
  EXPECT_EQ(got.corpora[1].bytes, -1);
  EXPECT_FALSE(fs::exists(dir / "bg.h5.tmp"));

  CheckpointWriter inline_writer(false);
  inline_writer.write(dir / "inline.h5", State(5.0f).content(), false, {});
  const auto same = read(dir / "inline.h5");
  EXPECT_EQ(same.arrays, got.arrays);
  EXPECT_EQ(same.info.round, got.info.round);
  fs::remove_all(dir);
}

TEST(CheckpointWriter, AFailedBackgroundWriteIsReportedAtTheNextWait) {
  const auto dir = fresh_dir();
  CheckpointWriter writer(true);
  const State state(1.0f);
  writer.write(dir / "no_such_folder" / "x.h5", state.content(), false, {});
  EXPECT_THROW(writer.wait(), fedavg::core::Error);
  writer.wait();  // reported once
  writer.write(dir / "x.h5", state.content(), false, {});
  writer.wait();
  EXPECT_EQ(read(dir / "x.h5").info.round, 1);
  fs::remove_all(dir);
}

TEST(CheckpointWriter, FinishWaitsForTheWriteAndALaterWriteStillWorks) {
  const auto dir = fresh_dir();
  const State first(3.0f), second(4.0f);  // their vocabularies outlive the writer
  CheckpointWriter writer(true);
  bool then_ran = false;
  writer.write(dir / "a.h5", first.content(), false, [&] { then_ran = true; });
  writer.finish();  // the copy it wrote from is gone
  EXPECT_TRUE(then_ran);
  EXPECT_EQ(read(dir / "a.h5").arrays.at(0), first.table);
  writer.write(dir / "b.h5", second.content(), false, {});
  writer.finish();
  EXPECT_EQ(read(dir / "b.h5").arrays.at(0), second.table);
  fs::remove_all(dir);
}

TEST(Checkpoint, AWriteThatRunsOutOfRoomSaysWhyAndKeepsTheCheckpointBefore) {
  const auto dir = fresh_dir();
  const auto path = dir / "run.h5";
  fedavg::core::write_checkpoint(path, State(1.0f).content(), false);
  State big(2.0f);
  big.table.assign(std::size_t{1} << 18, 0.5f);  // 1 MiB
  big.arrays[0] = {"embedding", {std::size_t{1} << 16, 4}, big.table.data()};
  // Files may not grow past 64 KiB for a moment, as on a full disk (the write fails with EFBIG).
  struct rlimit before {};
  getrlimit(RLIMIT_FSIZE, &before);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = before;
  small.rlim_cur = 64 << 10;
  setrlimit(RLIMIT_FSIZE, &small);
  std::string error;
  try {
    fedavg::core::write_checkpoint(path, big.content(), false);
  } catch (const fedavg::core::Error& e) {
    error = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(error.find((dir / "run.h5.tmp").string() + ": "), std::string::npos) << error;
  EXPECT_NE(error.find("File too large"), std::string::npos) << error;  // the system's reason
  EXPECT_FALSE(fs::exists(dir / "run.h5.tmp"));
  EXPECT_EQ(read(path).info.round, 1);
  fs::remove_all(dir);
}

TEST(Checkpoint, ALearnerStateThatIsNotPlainArraysAndJsonIsRefusedNamingTheFileAndDataset) {
  const auto dir = fresh_dir();
  const auto path = dir / "run.h5";
  State state(1.0f);
  state.learner_states = {{0x80, 0x04, 0x95, 1, 2, 3, 4, 5, 6, 7, 8, 9}};  // how a pickle begins
  fedavg::core::write_checkpoint(path, state.content(), false);
  try {
    read(path);
    FAIL() << "a pickled learner state was read";
  } catch (const fedavg::core::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ": dataset learner_state/0 is not a learner state", 0), 0u)
        << e.what();
  }
  fs::remove_all(dir);
}
