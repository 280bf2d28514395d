// Writes the run's checkpoints (core::write_checkpoint), inline or on a thread of its own. In the background,
// write() copies what it is given and returns at once, so the run goes on while the file is written; it first
// waits for the write before it, and throws that write's error, if any. Either way a checkpoint replaces the
// previous one only once it is whole: a crash while one is written leaves the one before.
#pragma once

#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/checkpoint.hpp"

namespace fedavg::core {

class CheckpointWriter {
 public:
  explicit CheckpointWriter(bool background) : background_(background) {}
  // Waits for the write in flight (its error is dropped: an error is unwinding, or wait() was not called).
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  bool background() const { return background_; }
  // Writes `content` to `path` as write_checkpoint does, then runs `then` (on the writer's thread in the
  // background). `content.vocabulary` is not copied: it must outlive this writer.
  void write(const std::filesystem::path& path, const CheckpointContent& content, bool die_before_rename,
             std::function<void()> then);
  // Waits until the last checkpoint is written; throws core::Error if it could not be.
  void wait();
  // wait(), then gives back the memory of the copy a background write keeps for the next one (a copy of the
  // weights), for the end of the run. A later write() makes a new copy.
  void finish();

 private:
  bool background_;
  std::thread thread_;
  std::exception_ptr error_;        // of the write on thread_, read once it is joined
  Checkpoint snapshot_;             // what thread_ writes: copies of the run's state when write() was called
  std::vector<NamedArray> arrays_;  // views of snapshot_.arrays, with their shapes
};

}  // namespace fedavg::core
