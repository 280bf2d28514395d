// A 64-bit fingerprint (FNV-1a, then a final mix) of what a token cache depends on: a corpus file's identity
// and a summary of its content, whole small files (the vocabulary, the tokenizer's code), numbers. Not
// cryptographic: it names caches, it does not defend against crafted collisions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/corpus_summary.hpp"

namespace fedavg::data {

class Fingerprint {
 public:
  void add(std::string_view bytes);
  void add(std::int64_t value);
  // Every byte of a file (meant for small files the job reads alike on every rank: the vocabulary, the
  // tokenizer's code). Throws core::InputError naming the file if it cannot be opened.
  void add_file(const std::filesystem::path& path);
  // A corpus file's identity and content summary: its absolute path, size, modification time and its first and
  // last MiB. Throws core::Error naming the file if it cannot be read.
  void add_file_summary(const std::filesystem::path& path);

  // Its first and last MiB, of a file of `size` bytes. Throws core::Error naming the file if it cannot be read.
  void add_ends(const std::filesystem::path& path, std::int64_t size);

  std::uint64_t value() const;
  // value() as 16 hex digits.
  std::string hex() const;

 private:
  // Mixes n bytes into the hash (FNV-1a).
  void mix(const void* bytes, std::size_t n);
  std::uint64_t h_ = 1469598103934665603ULL;
};

// A corpus file's size and the fingerprint of its size and first and last MiB (not of its name or time, so a
// copy or a move keeps it): what a checkpoint keeps to tell on --resume whether a corpus is the one it was read
// from. Bytes -1 where the file cannot be read.
core::CorpusSummary corpus_summary(const std::filesystem::path& path);

}  // namespace fedavg::data
