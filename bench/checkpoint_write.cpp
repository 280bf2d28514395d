// Writes and reads back a checkpoint of two tables of V x dim float32 (the text8 prefix's 80 982 words x 300 by
// default) with core::write_checkpoint and core::read_checkpoint, as the Dispatcher does, and prints one line:
// "bytes B write_s W1 W2 ... read_s R1 R2 ...". Built and run by bench/checkpoint.py.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/checkpoint.hpp"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: checkpoint_write DIR WORDS DIM REPS\n");
    return 2;
  }
  const std::filesystem::path path = std::filesystem::path(argv[1]) / "bench.h5";
  const std::size_t words = std::strtoul(argv[2], nullptr, 10), dim = std::strtoul(argv[3], nullptr, 10);
  const int reps = std::atoi(argv[4]);
  std::vector<float> in(words * dim), out(words * dim);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 1000) * 1e-3f - 0.5f;
  out = in;
  const std::vector<fedavg::core::NamedArray> arrays{{"embedding", {words, dim}, in.data()},
                                                     {"out_vectors", {words, dim}, out.data()}};
  fedavg::core::CheckpointInfo info;
  info.data_name = "bench";
  info.strategy = "fedavg";
  const std::vector<std::vector<std::uint8_t>> learner_states(2);
  const std::vector<fedavg::core::ReadPosition> positions{{0, 0}};
  const std::vector<float> strategy_state;
  std::vector<std::string> vocabulary(words);
  for (std::size_t i = 0; i < words; ++i) vocabulary[i] = "w" + std::to_string(i);
  const std::vector<fedavg::core::PipelineProgress> progress{{0.0, 0.0}};
  const std::vector<std::string> restarts;
  const std::vector<fedavg::core::ShardProgress> shards;
  const std::vector<fedavg::core::CorpusSummary> corpora{{1, 1}};
  const fedavg::core::CheckpointContent content{arrays,     info,     learner_states, positions, strategy_state,
                                                vocabulary, progress, restarts,       shards,    corpora};
  using Clock = std::chrono::steady_clock;
  std::string writes, reads;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    fedavg::core::write_checkpoint(path, content);
    writes += " " + std::to_string(std::chrono::duration<double>(Clock::now() - t0).count());
    t0 = Clock::now();
    const auto back = fedavg::core::read_checkpoint(path, {{"embedding", words * dim}, {"out_vectors", words * dim}});
    reads += " " + std::to_string(std::chrono::duration<double>(Clock::now() - t0).count());
    if (back.arrays.at(1) != out) return 1;
  }
  std::printf("bytes %ju write_s%s read_s%s\n", static_cast<std::uintmax_t>(std::filesystem::file_size(path)),
              writes.c_str(), reads.c_str());
  return 0;
}
