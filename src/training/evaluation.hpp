// The Dispatcher's evaluation of the global weights: their mean loss on the test windows (test.txt) and, every
// eval_every rounds, their embeddings' word-similarity and analogy scores (similarity.tsv, analogies.txt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bridge/library.hpp"
#include "bridge/scores.hpp"
#include "bridge/text.hpp"
#include "core/matrix.hpp"
#include "core/vocabulary.hpp"
#include "training/context.hpp"

namespace fedavg::training {

class Evaluation {
 public:
  // Loads the test set, and with eval_every the score files, against `vocab` now, before the model imports torch,
  // so bad input fails fast (core::InputError). `lib` runs the model evaluated and must outlive this object; it is
  // used only from the first test_loss() or embeddings() on, so it may be built after this object.
  Evaluation(const Context& ctx, bridge::Text& text, const core::Vocabulary& vocab, bridge::Library& lib);

  std::size_t test_windows() const { return test_windows_; }
  // The model's mean loss on the test windows, over the weights as they are now.
  double test_loss();
  // The model's embedding matrix, over the weights as they are now.
  core::Matrix embeddings();
  // The embeddings' word-similarity and analogy scores if round `round` is scored (eval_every), else NaN.
  bridge::Scores::Result scores(long round);
  // "  similarity 0.123  analogies 0.045" for the progress line (the parts that were scored), or "".
  static std::string text(const bridge::Scores::Result& sc);

 private:
  bridge::Library& lib_;
  const int eval_every_;
  const int width_;
  const std::vector<std::int32_t> test_;
  const std::size_t test_windows_;
  std::unique_ptr<bridge::Scores> scores_;  // null unless eval_every
};

}  // namespace fedavg::training
