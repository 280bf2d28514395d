// Typed calls into python/textpipe.py: vocabulary and test-set parsing, and tokenization. This module never
// imports torch, so pipeline ranks stay small.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/vocabulary.hpp"

namespace fedavg::bridge {

class Interpreter;

class Text {
 public:
  // Imports textpipe; throws PythonError naming every missing function.
  explicit Text(Interpreter& py);
  ~Text();
  Text(const Text&) = delete;
  Text& operator=(const Text&) = delete;

  // Parses vocab.txt; throws core::InputError("path:line: ...") on bad content.
  core::Vocabulary load_vocab(const std::filesystem::path& path);
  // Parses test.txt against the vocabulary last loaded; returns int32 [T * (2*window+1)] in text order.
  std::vector<std::int32_t> load_test(const std::filesystem::path& path, int window);
  // Tokenizes whole lines of UTF-8 text with the vocabulary last loaded, appending ids and markers to `out`.
  void tokenize(const char* data, std::size_t size, std::vector<std::int32_t>& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fedavg::bridge
