// Builds this rank's copy of the model: sizes the flat weight buffer from the parameter shapes the model declares and
// creates the model over it (seeded, so every rank starts identical).
#pragma once

#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bridge/library.hpp"
#include "bridge/python_error.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "core/vocabulary.hpp"
#include "training/context.hpp"

namespace fedavg::training {

struct ModelSetup {
  std::vector<bridge::ParamShape> shapes;
  nlohmann::json cfg;        // the dict library.py received
  std::size_t size() const;  // parameters in all
};

// Runs f() (a call that builds the model). What it raises happens alike on every rank that runs the model, so it
// becomes core::InputError, reported once, by rank 0: a cfg value the model refuses (bridge::ConfigError) named
// where the value was set, any other Python error (bad model code) with its traceback.
template <typename F> decltype(auto) refused_as_input(const core::Config& cfg, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const bridge::ConfigError& e) {
    throw core::InputError(cfg.where(e.key()) + ": " + e.what());
  } catch (const bridge::PythonError& e) {
    throw core::InputError(e.what());
  }
}

// The dict for library.py and the parameter shapes it declares. `rank` in the dict tells the model which
// learner it is (it seeds that learner's random draws); the Dispatcher passes the number of learners.
// `share_learners` is `sharing`, how many learners train the same weights at once (Strategy::sharing; the
// Dispatcher's is 1).
ModelSetup describe_model(const Context& ctx, const core::Vocabulary& vocab, bridge::Library& lib, int sharing = 1);

// describe_model, then `weights` is resized to the model's size, filled from the seed, and viewed by `lib`'s
// model: it must outlive it.
ModelSetup setup_model(const Context& ctx, const core::Vocabulary& vocab, bridge::Library& lib,
                       std::vector<float>& weights);

}  // namespace fedavg::training
