#include "training/model_setup.hpp"

#include <algorithm>

#include "comm/communicator.hpp"
#include "core/error.hpp"

namespace fedavg::training {

namespace {

// This rank's place among the Dispatcher and learners on its host (device "auto" spreads them over its GPUs).
int local_rank(const Context& ctx) { return ctx.learners.valid() ? ctx.topology.local_rank(ctx.learners.rank()) : 0; }

}  // namespace

std::size_t ModelSetup::size() const {
  std::size_t total = 0;
  for (const auto& p : shapes) total += p.size();
  return total;
}

ModelSetup describe_model(const Context& ctx, const core::Vocabulary& vocab, bridge::Library& lib, int sharing) {
  ModelSetup m;
  m.cfg = ctx.cfg.settings.to_json();
  m.cfg["vocab_size"] = vocab.size();
  m.cfg["counts"] = vocab.counts.empty() ? nlohmann::json(nullptr) : nlohmann::json(vocab.counts);
  m.cfg["rank"] = ctx.me.role == core::Role::Learner ? ctx.map.learner_index(ctx.me.rank) : ctx.map.learners();
  m.cfg["local_rank"] = local_rank(ctx);
  m.cfg["learners"] = ctx.map.learners();
  // Learners that train one shared copy of the weights at once (share_host): the model splits its batches so
  // that their steps together make one of bs windows. Shared weights live in host memory.
  m.cfg["share_learners"] = sharing;
  if (sharing > 1 || ctx.plan.cpu_only) m.cfg["device"] = "cpu";
  m.cfg["bpe"] = ctx.plan.learner_bpe;  // what each learner trains a round (the model's schedule counts steps)
  m.shapes = refused_as_input(ctx.cfg, [&] { return lib.param_shapes(m.cfg); });
  if (m.size() == 0) throw core::Error("engine.param_shapes describes a model with no parameters");
  return m;
}

ModelSetup setup_model(const Context& ctx, const core::Vocabulary& vocab, bridge::Library& lib,
                       std::vector<float>& weights) {
  ModelSetup m = describe_model(ctx, vocab, lib);
  weights.assign(m.size(), 0.0f);
  refused_as_input(ctx.cfg, [&] { lib.create(m.cfg, weights.data(), weights.size(), true); });
  return m;
}

}  // namespace fedavg::training
