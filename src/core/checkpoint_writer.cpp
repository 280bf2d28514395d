#include "core/checkpoint_writer.hpp"

#include <utility>

namespace fedavg::core {

CheckpointWriter::~CheckpointWriter() {
  if (thread_.joinable()) thread_.join();
}

void CheckpointWriter::wait() {
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void CheckpointWriter::finish() {
  wait();
  snapshot_ = Checkpoint{};
  std::vector<NamedArray>().swap(arrays_);
}

void CheckpointWriter::write(const std::filesystem::path& path, const CheckpointContent& content,
                             bool die_before_rename, std::function<void()> then) {
  wait();
  if (!background_) {
    write_checkpoint(path, content, die_before_rename);
    if (then) then();
    return;
  }
  Checkpoint& s = snapshot_;
  s.arrays.resize(content.arrays.size());
  arrays_.clear();
  for (std::size_t i = 0; i < content.arrays.size(); ++i) {
    const NamedArray& a = content.arrays[i];
    std::size_t n = 1;
    for (const std::size_t d : a.shape) n *= d;
    s.arrays[i].assign(a.data, a.data + n);
    arrays_.push_back({a.name, a.shape, s.arrays[i].data()});
  }
  s.info = content.info;
  s.learner_states = content.learner_states;
  s.positions = content.positions;
  s.strategy_state = content.strategy_state;
  s.progress = content.progress;
  s.restarts = content.restarts;
  s.shards = content.shards;
  s.corpora = content.corpora;
  const std::vector<std::string>* vocabulary = &content.vocabulary;
  thread_ = std::thread([this, path, vocabulary, die_before_rename, then = std::move(then)] {
    try {
      const Checkpoint& s = snapshot_;
      write_checkpoint(path,
                       {arrays_, s.info, s.learner_states, s.positions, s.strategy_state, *vocabulary, s.progress,
                        s.restarts, s.shards, s.corpora},
                       die_before_rename);
      if (then) then();
    } catch (...) {
      error_ = std::current_exception();
    }
  });
}

}  // namespace fedavg::core
