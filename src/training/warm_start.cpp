#include "training/warm_start.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/checkpoint.hpp"
#include "core/error.hpp"

namespace fedavg::training {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Copies the rows of `old` (one per word of `old_words`, `cols` values each) into `dst` (one per word of `words`)
// for every word both hold; returns how many.
std::size_t copy_rows(const std::vector<float>& old, const std::vector<std::string>& old_words,
                      const std::vector<std::string>& words, std::size_t cols, float* dst) {
  std::unordered_map<std::string, std::size_t> old_row;
  for (std::size_t i = 0; i < old_words.size(); ++i) old_row.emplace(old_words[i], i);
  std::size_t known = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto it = old_row.find(words[i]);
    if (it == old_row.end()) continue;
    std::copy_n(old.begin() + static_cast<std::ptrdiff_t>(it->second * cols), cols, dst + i * cols);
    ++known;
  }
  return known;
}

}  // namespace

std::string WarmStart::summary(const std::filesystem::path& from) const {
  std::string out = "warm start from " + from.string() + ": " + std::to_string(known_words) + " of " +
                    std::to_string(words) + " words keep their vectors (" + joined(by_word) + ")";
  if (known_words < words) out += ", " + std::to_string(words - known_words) + " new words start afresh";
  if (!whole.empty()) out += "; copied whole: " + joined(whole);
  if (!fresh.empty()) out += "; not in the checkpoint, or of another size, so initialised afresh: " + joined(fresh);
  return out;
}

void check_init_from(const std::filesystem::path& from, int dim) {
  if (from.empty()) return;
  const auto ck = core::read_checkpoint_words(from, {"embedding"});
  const auto it = ck.arrays.find("embedding");
  if (it == ck.arrays.end() || ck.vocabulary.empty()) return;
  const std::size_t cols = it->second.size() / ck.vocabulary.size();
  if (cols != static_cast<std::size_t>(dim))
    throw core::InputError(from.string() + ": its embedding has dim " + std::to_string(cols) + ", this run's dim is " +
                           std::to_string(dim) + "; --init-from needs the same dim (--dim " + std::to_string(cols) +
                           ")");
}

WarmStart warm_start(const std::filesystem::path& from, const std::vector<std::string>& words,
                     const std::vector<bridge::ParamShape>& shapes, std::vector<float>& weights) {
  std::vector<std::string> names;
  for (const auto& p : shapes) names.push_back(p.name);
  const auto ck = core::read_checkpoint_words(from, names);
  WarmStart w;
  w.words = words.size();
  std::size_t offset = 0;
  for (const auto& p : shapes) {
    float* dst = weights.data() + offset;
    offset += p.size();
    const auto it = ck.arrays.find(p.name);
    const std::size_t cols = p.shape.empty() || p.shape[0] == 0 ? 0 : p.size() / p.shape[0];
    const bool by_word = !p.shape.empty() && p.shape[0] == words.size() && it != ck.arrays.end() &&
                         it->second.size() == ck.vocabulary.size() * cols;
    if (by_word) {
      w.known_words = copy_rows(it->second, ck.vocabulary, words, cols, dst);
      w.by_word.push_back(p.name);
    } else if (it != ck.arrays.end() && it->second.size() == p.size()) {
      std::copy(it->second.begin(), it->second.end(), dst);
      w.whole.push_back(p.name);
    } else {
      w.fresh.push_back(p.name);
    }
  }
  if (w.by_word.empty())
    throw core::InputError(from.string() +
                           (ck.arrays.empty() ? ": holds none of this model's parameters (" + joined(names) + ")"
                                              : ": its parameters have other sizes than this "
                                                "model's (another dim?)") +
                           "; --init-from needs a checkpoint of the same model, one row per word");
  if (w.known_words == 0)
    throw core::InputError(from.string() +
                           ": not one word of its vocabulary is in this run's; --init-from keeps "
                           "the vectors of the words both hold");
  return w;
}

}  // namespace fedavg::training
