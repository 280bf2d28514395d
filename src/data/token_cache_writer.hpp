// Writes a data::TokenCache file while a byte range of a corpus is tokenized: blocks are appended as they come
// to a file that has no name yet (O_TMPFILE, in the cache's folder); commit() adds the index and the trailer
// and links the file into place, so a crash or a kill leaves nothing behind, neither a half cache under the
// real name nor a temporary file. Where the file system has no unnamed files, a temporary name beside the
// cache takes their place (a kill then leaves it). Holds only the index in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/token_cache.hpp"

namespace fedavg::data {

class TokenCacheWriter {
 public:
  // Creates the folder of `path` if needed. Throws core::Error naming the file if it cannot be created.
  TokenCacheWriter(std::filesystem::path path, std::uint64_t key, std::int64_t range_begin, std::int64_t range_end);
  // Closes the file, and removes it unless committed.
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
  void write(const void* data, std::size_t bytes);
  // The file being written, for messages.
  std::string where() const;

  std::filesystem::path path_;
  std::filesystem::path tmp_;  // its temporary name; empty while it has none
  int fd_ = -1;
  CacheTrailer trailer_{};
  std::vector<CacheBlock> index_;
  bool committed_ = false;
};

}  // namespace fedavg::data
