// Writes a data::TokenCache file while a byte range of a corpus is tokenized: blocks are appended as they come,
// to a temporary name beside the cache; commit() adds the index and the trailer and renames the file into
// place, so a crash never leaves a half cache under the real name. Holds only the index in memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

#include "data/token_cache.hpp"

namespace fedavg::data {

class TokenCacheWriter {
 public:
  // Creates the folder of `path` if needed. Throws core::Error naming the file if it cannot be created.
  TokenCacheWriter(std::filesystem::path path, std::uint64_t key, std::int64_t range_begin, std::int64_t range_end);
  // Removes the temporary file unless committed.
  ~TokenCacheWriter();
  TokenCacheWriter(const TokenCacheWriter&) = delete;
  TokenCacheWriter& operator=(const TokenCacheWriter&) = delete;

  // The ids of the next block, bytes [text_begin, text_end) of the corpus. Throws core::Error on a write error.
  void add(std::int64_t text_begin, std::int64_t text_end, const std::vector<std::int32_t>& ids);
  // Finishes the file and renames it to `path`. Throws core::Error if the blocks do not cover the range or the
  // file cannot be written.
  void commit();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  CacheTrailer trailer_{};
  std::ofstream out_;
  std::vector<CacheBlock> index_;
  bool committed_ = false;
};

}  // namespace fedavg::data
