// Builds this rank's copy of the model: sizes the flat weight buffer from the parameter shapes the model declares and
// creates the model over it (seeded, so every rank starts identical).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "bridge/library.hpp"
#include "core/vocabulary.hpp"
#include "training/context.hpp"

namespace fedavg::training {

struct ModelSetup {
  std::vector<bridge::ParamShape> shapes;
  nlohmann::json cfg;  // the dict library.py received
  std::size_t size() const;  // parameters in all
};

// The dict for library.py and the parameter shapes it declares. `rank` in the dict tells the model which
// learner it is (it seeds that learner's random draws); the Dispatcher passes the number of learners.
ModelSetup describe_model(const Context& ctx, const core::Vocabulary& vocab, bridge::Library& lib);

// describe_model, then `weights` is resized to the model's size, filled from the seed, and viewed by `lib`'s
// model: it must outlive it.
ModelSetup setup_model(const Context& ctx, const core::Vocabulary& vocab, bridge::Library& lib,
                       std::vector<float>& weights);

}  // namespace fedavg::training
