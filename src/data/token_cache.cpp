#include "data/token_cache.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

namespace fedavg::data {

std::filesystem::path token_cache_path(const std::filesystem::path& dir, std::uint64_t key, std::int64_t begin,
                                       std::int64_t end) {
  char name[96];
  std::snprintf(name, sizeof name, "%016llx_%lld_%lld.ids", static_cast<unsigned long long>(key),
                static_cast<long long>(begin), static_cast<long long>(end));
  return dir / name;
}

TokenCache::TokenCache(std::filesystem::path path, MappedFile file, std::vector<CacheBlock> index)
    : path_(std::move(path)), file_(std::move(file)), index_(std::move(index)) {}

std::optional<TokenCache> TokenCache::open(const std::filesystem::path& path, std::uint64_t key, std::int64_t begin,
                                           std::int64_t end) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < sizeof(CacheTrailer)) return std::nullopt;
  MappedFile file(path);
  if (file.size() != size) return std::nullopt;  // changed under us
  CacheTrailer t{};
  std::memcpy(&t, file.data() + size - sizeof t, sizeof t);
  if (std::memcmp(t.magic, kCacheMagic, sizeof t.magic) != 0 || t.key != key || t.range_begin != begin ||
      t.range_end != end || t.ids < 0 || t.blocks <= 0)
    return std::nullopt;
  const auto ids_bytes = static_cast<std::uint64_t>(t.ids) * sizeof(std::int32_t);
  const auto index_bytes = static_cast<std::uint64_t>(t.blocks) * sizeof(CacheBlock);
  if (ids_bytes + index_bytes + sizeof t != size) return std::nullopt;
  std::vector<CacheBlock> index(static_cast<std::size_t>(t.blocks));
  std::memcpy(index.data(), file.data() + ids_bytes, index_bytes);
  // The blocks must tile both the byte range and the ids.
  std::int64_t text = begin, id = 0;
  for (const auto& b : index) {
    if (b.text_begin != text || b.text_end <= b.text_begin || b.id_begin != id || b.id_end < b.id_begin)
      return std::nullopt;
    text = b.text_end;
    id = b.id_end;
  }
  if (text != end || id != t.ids) return std::nullopt;
  file.release(0, file.size());
  return TokenCache(path, std::move(file), std::move(index));
}

std::vector<std::int32_t> TokenCache::ids(std::size_t i) const {
  const auto& b = index_.at(i);
  const auto from = static_cast<std::size_t>(b.id_begin) * sizeof(std::int32_t);
  const auto to = static_cast<std::size_t>(b.id_end) * sizeof(std::int32_t);
  std::vector<std::int32_t> out(static_cast<std::size_t>(b.id_end - b.id_begin));
  std::memcpy(out.data(), file_.data() + from, to - from);
  file_.release(from, to);
  return out;
}

std::size_t TokenCache::find(std::int64_t text_begin) const {
  const auto it = std::lower_bound(index_.begin(), index_.end(), text_begin,
                                   [](const CacheBlock& b, std::int64_t at) { return b.text_begin < at; });
  return it != index_.end() && it->text_begin == text_begin ? static_cast<std::size_t>(it - index_.begin())
                                                            : index_.size();
}

}  // namespace fedavg::data
