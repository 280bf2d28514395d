// Typed calls into python/runtime/decompress.py: the plain copy a job reads in place of a compressed corpus
// (gzip, bzip2, xz), kept in the cache folder. Imports no torch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace fedavg::bridge {

class Interpreter;

class PlainCorpus {
 public:
  explicit PlainCorpus(Interpreter& py);

  // Where the plain copy of `corpus` is or will be, in `cache_dir`; nullopt when `corpus` is not compressed.
  std::optional<std::string> path(const std::string& corpus, const std::filesystem::path& cache_dir);
  // Writes the plain copy of `corpus` unless it is there (one rank of a host writes, the others wait for it).
  // Throws core::CorpusError naming `corpus` when it does not decompress.
  void ensure(const std::string& corpus, const std::filesystem::path& cache_dir);
};

}  // namespace fedavg::bridge
