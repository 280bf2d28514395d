// Builds this rank's copy of the model: reads the vocabulary, sizes the flat weight buffer from library.py's
// parameter shapes and creates the model over it (seeded, so every rank starts identical).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "bridge/library.hpp"
#include "bridge/text.hpp"
#include "core/vocabulary.hpp"
#include "roles/role.hpp"

namespace fedavg::roles {

struct ModelSetup {
  core::Vocabulary vocab;
  std::vector<bridge::ParamShape> shapes;
  nlohmann::json cfg;  // the dict library.py received
};

// `weights` is resized to the model's size and must outlive `lib`'s model.
ModelSetup setup_model(const Context& ctx, bridge::Text& text, bridge::Library& lib, std::vector<float>& weights);

}  // namespace fedavg::roles
