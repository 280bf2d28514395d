// A complete on-disk token cache, memory-mapped: the int32 ids and markers a byte range of a corpus file gives,
// exactly as data::TokenSource hands them out, with the index of its blocks (byte range -> id range). Only a
// file that is whole and carries the expected key opens; anything else (missing, half written, written for
// another corpus, vocabulary or held-out set) counts as no cache.
//
// File layout (native byte order): int32 ids[n_ids], then CacheBlock index[n_blocks], then CacheTrailer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "data/mapped_file.hpp"

namespace fedavg::data {

struct CacheBlock {
  std::int64_t text_begin, text_end;  // bytes of the corpus file
  std::int64_t id_begin, id_end;      // ids of the cache
};

struct CacheTrailer {
  char magic[8];
  std::uint64_t key;
  std::int64_t range_begin, range_end;  // the bytes of the corpus file the cache covers
  std::int64_t ids;
  std::int64_t blocks;
};

inline constexpr char kCacheMagic[8] = {'F', 'E', 'D', 'T', 'O', 'K', '0', '1'};

// The cache file of byte range [begin, end) of a corpus whose fingerprint is `key`, inside `dir`.
std::filesystem::path token_cache_path(const std::filesystem::path& dir, std::uint64_t key, std::int64_t begin,
                                       std::int64_t end);

class TokenCache {
 public:
  // The cache at `path` if it is complete and was written for `key` and [begin, end); otherwise nothing. Throws
  // core::Error only if a file that checks out cannot be mapped.
  static std::optional<TokenCache> open(const std::filesystem::path& path, std::uint64_t key, std::int64_t begin,
                                        std::int64_t end);

  const std::filesystem::path& path() const { return path_; }
  std::size_t blocks() const { return index_.size(); }
  const CacheBlock& block(std::size_t i) const { return index_[i]; }
  // The ids of block i. Their pages leave this process's memory again (the mapping stays): a reader going
  // through the file holds at most a block's pages at a time.
  std::vector<std::int32_t> ids(std::size_t i) const;
  // The block that starts at byte `text_begin` of the corpus, or blocks() if none does.
  std::size_t find(std::int64_t text_begin) const;

 private:
  TokenCache(std::filesystem::path path, MappedFile file, std::vector<CacheBlock> index);
  std::filesystem::path path_;
  MappedFile file_;
  std::vector<CacheBlock> index_;
};

}  // namespace fedavg::data
