#include "training/evaluation.hpp"

#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "training/progress.hpp"

namespace fedavg::training {
namespace {

// The in-run scorer when eval_every is set: the config folder must then hold similarity.tsv, analogies.txt or
// both (checked before torch is imported).
std::unique_ptr<bridge::Scores> make_scores(const Context& ctx, const core::Vocabulary& vocab) {
  const auto& cfg = ctx.cfg;
  if (cfg.settings.eval_every == 0) return nullptr;
  auto present = [](const std::filesystem::path& p) {
    return std::filesystem::exists(p) ? p : std::filesystem::path();
  };
  const auto similarity = present(cfg.similarity_path()), analogies = present(cfg.analogies_path());
  if (similarity.empty() && analogies.empty())
    throw core::InputError(cfg.cfg_path().string() + ": \"eval_every\" needs similarity.tsv or analogies.txt in " +
                           cfg.config_dir.string());
  return std::make_unique<bridge::Scores>(ctx.py, vocab.words, similarity, analogies);
}

}  // namespace

Evaluation::Evaluation(const Context& ctx, bridge::Text& text, const core::Vocabulary& vocab, bridge::Library& lib)
    : lib_(lib),
      eval_every_(ctx.cfg.settings.eval_every),
      width_(ctx.cfg.settings.window_width()),
      test_(text.load_test(ctx.cfg.test_path(), ctx.cfg.settings.window)),
      test_windows_(test_.size() / static_cast<std::size_t>(width_)),
      scores_(make_scores(ctx, vocab)) {}

double Evaluation::test_loss() {
  lib_.load_weights();
  return lib_.test_loss(test_.data(), test_windows_, width_);
}

core::Matrix Evaluation::embeddings() {
  lib_.load_weights();
  return lib_.embeddings();
}

bridge::Scores::Result Evaluation::scores(long round) {
  if (!scores_ || round % eval_every_ != 0) return {};
  return scores_->score(embeddings());
}

std::string Evaluation::text(const bridge::Scores::Result& sc) {
  std::string out;
  if (!std::isnan(sc.similarity)) out += "  similarity " + fmt("%.3f", sc.similarity);
  if (!std::isnan(sc.analogy)) out += "  analogies " + fmt("%.3f", sc.analogy);
  return out;
}

}  // namespace fedavg::training
