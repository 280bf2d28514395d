// Typed calls into python/engine.py, the contract with the models users edit in python/library.py. The model's
// parameters live in a flat float32 buffer owned by the caller, which must outlive this object: as views of it on a
// CPU, as a copy on a GPU that load_weights and store_weights move. Arrays passed in are views valid for the call
// only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bridge/written_rows.hpp"
#include "core/matrix.hpp"

namespace fedavg::bridge {

class Interpreter;

struct ParamShape {
  std::string name;
  std::vector<std::size_t> shape;
  std::size_t size() const;
};

class Library {
 public:
  // Imports engine; throws PythonError naming every missing function.
  explicit Library(Interpreter& py);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  std::vector<ParamShape> param_shapes(const nlohmann::json& cfg);
  // Builds the model over weights[0, n); fills them from cfg["seed"] when `init`.
  void create(const nlohmann::json& cfg, float* weights, std::size_t n, bool init);
  // One optimizer step on `n` windows of `width` ids; returns the batch's mean loss.
  double train_step(const std::int32_t* windows, std::size_t n, int width);
  // Mean test loss over `n` windows of `width` ids.
  double test_loss(const std::int32_t* windows, std::size_t n, int width);
  // The model's state besides the weights (optimizer moments, step counters, RNG), as opaque bytes; empty
  // when the model keeps none or engine.py defines no get_state.
  std::vector<std::uint8_t> get_state();
  // Restores a state from get_state (ignored when engine.py defines no set_state, or `state` is empty). Throws
  // core::InputError with engine.set_state's words when the bytes are not a state of this model (a field missing
  // or out of its range).
  void set_state(const std::vector<std::uint8_t>& state);
  // The model's current learning rate; NaN when library.py defines no current_lr.
  double current_lr();
  // This learner's steps over the whole run, for the model's schedule (nothing when engine.py has no plan_steps).
  void plan_steps(std::int64_t steps);
  // The host's steps per learner so far, where a schedule should follow them rather than this learner's own count
  // (nothing when engine.py has no at_step).
  void at_step(std::int64_t steps);
  // The rows the steps wrote since the last call (engine.written_rows; empty when engine.py has none).
  WrittenRows written_rows();
  // The weights buffer changed (a merge, a broadcast, a resume): the model takes it. Nothing to do unless the
  // model trains a copy of its own (on a GPU); a no-op when engine.py defines no load_weights.
  void load_weights();
  // The model writes its weights into the buffer, before the caller reads it; likewise a no-op on a CPU.
  void store_weights();
  // Where the model trains, as torch names it ("cpu", "cuda:0"); "cpu" when engine.py defines no device.
  std::string device();
  // What the run trains, for the start-up line ("neg_autograd (NegCBOW in /path/library.py)"), and a warning, or
  // "", when library.py edits model classes of the bundled folder's library.py (in `bundled_dir`) but not the
  // one cfg selects. {cfg's model, ""} when engine.py defines no model_origin (a copy of an older python/).
  std::pair<std::string, std::string> model_origin(const nlohmann::json& cfg, const std::string& bundled_dir);
  // The embedding matrix [vocab, dim].
  core::Matrix embeddings();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fedavg::bridge
