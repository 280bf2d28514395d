// --init-from: a new run starts from an earlier run's weights, word by word. A parameter whose rows are words (its
// first dimension the vocabulary size, in this run and in the checkpoint) takes, for every word both vocabularies
// hold, that word's row from the checkpoint; a parameter of the same name and size that is not one row per word
// (a hidden layer) is copied whole; every other value keeps its fresh initial one.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "bridge/library.hpp"

namespace fedavg::training {

struct WarmStart {
  std::size_t words = 0;             // the words of this run's vocabulary
  std::size_t known_words = 0;       // of them, those the checkpoint's vocabulary holds: their rows were copied
  std::vector<std::string> by_word;  // the parameters copied row by row, by word
  std::vector<std::string> whole;    // the parameters copied whole
  std::vector<std::string> fresh;    // the parameters the checkpoint does not give: freshly initialised
  // "warm start from PATH: 812 of 1000 words keep their vectors (embedding, out_vectors); ..."
  std::string summary(const std::filesystem::path& from) const;
};

// Throws InputError naming `from` unless it is empty or a checkpoint with a vocabulary whose `embedding`, if it
// has one, has `dim` columns: before the job prepares anything, on the rank that will read it (rank 0).
void check_init_from(const std::filesystem::path& from, int dim);

// Overwrites `weights` (laid out as `shapes`, rows of the vocabulary `words`) with what the checkpoint `from`
// gives. Throws InputError naming the file when it is not a checkpoint, or gives no parameter or no word.
WarmStart warm_start(const std::filesystem::path& from, const std::vector<std::string>& words,
                     const std::vector<bridge::ParamShape>& shapes, std::vector<float>& weights);

}  // namespace fedavg::training
