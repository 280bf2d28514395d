#include "training/model_setup.hpp"

#include "core/error.hpp"

namespace fedavg::training {

std::size_t ModelSetup::size() const {
  std::size_t total = 0;
  for (const auto& p : shapes) total += p.size();
  return total;
}

ModelSetup describe_model(const Context& ctx, const core::Vocabulary& vocab, bridge::Library& lib) {
  ModelSetup m;
  m.cfg = ctx.cfg.settings.to_json();
  m.cfg["vocab_size"] = vocab.size();
  m.cfg["counts"] = vocab.counts.empty() ? nlohmann::json(nullptr) : nlohmann::json(vocab.counts);
  m.cfg["rank"] = ctx.me.role == core::Role::Learner ? ctx.map.learner_index(ctx.me.rank) : ctx.map.learners();
  m.shapes = lib.param_shapes(m.cfg);
  if (m.size() == 0) throw core::Error("engine.param_shapes describes a model with no parameters");
  return m;
}

ModelSetup setup_model(const Context& ctx, const core::Vocabulary& vocab, bridge::Library& lib,
                       std::vector<float>& weights) {
  ModelSetup m = describe_model(ctx, vocab, lib);
  weights.assign(m.size(), 0.0f);
  lib.create(m.cfg, weights.data(), weights.size(), true);
  return m;
}

}  // namespace fedavg::training
