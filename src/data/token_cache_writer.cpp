#include "data/token_cache_writer.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "core/error.hpp"

namespace fedavg::data {

TokenCacheWriter::TokenCacheWriter(std::filesystem::path path, std::uint64_t key, std::int64_t range_begin,
                                   std::int64_t range_end)
    : path_(std::move(path)) {
  std::error_code ec;
  std::filesystem::create_directories(path_.parent_path(), ec);
  if (ec) throw core::Error(path_.parent_path().string() + ": cannot create the token cache folder: " + ec.message());
  // Unique among concurrent writers of the same range (other pipelines, other hosts on a shared folder).
  tmp_ = path_;
  tmp_ += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(std::random_device{}());
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw core::Error(tmp_.string() + ": cannot create: " + std::strerror(errno));
  std::memcpy(trailer_.magic, kCacheMagic, sizeof trailer_.magic);
  trailer_.key = key;
  trailer_.range_begin = range_begin;
  trailer_.range_end = range_end;
}

TokenCacheWriter::~TokenCacheWriter() {
  if (committed_) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void TokenCacheWriter::add(std::int64_t text_begin, std::int64_t text_end, const std::vector<std::int32_t>& ids) {
  const std::int64_t first = index_.empty() ? 0 : index_.back().id_end;
  index_.push_back({text_begin, text_end, first, first + static_cast<std::int64_t>(ids.size())});
  out_.write(reinterpret_cast<const char*>(ids.data()), static_cast<std::streamsize>(ids.size() * sizeof(ids[0])));
  if (!out_) throw core::Error(tmp_.string() + ": write error: " + std::strerror(errno));
}

void TokenCacheWriter::commit() {
  std::int64_t text = trailer_.range_begin;
  for (const auto& b : index_) {
    if (b.text_begin != text) throw core::Error(tmp_.string() + ": the token cache's blocks leave a gap");
    text = b.text_end;
  }
  if (index_.empty() || text != trailer_.range_end)
    throw core::Error(tmp_.string() + ": the token cache's blocks do not cover the byte range");
  trailer_.ids = index_.back().id_end;
  trailer_.blocks = static_cast<std::int64_t>(index_.size());
  out_.write(reinterpret_cast<const char*>(index_.data()),
             static_cast<std::streamsize>(index_.size() * sizeof(CacheBlock)));
  out_.write(reinterpret_cast<const char*>(&trailer_), sizeof trailer_);
  out_.close();
  if (!out_) throw core::Error(tmp_.string() + ": write error: " + std::strerror(errno));
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) throw core::Error(tmp_.string() + ": cannot rename to " + path_.string() + ": " + ec.message());
  committed_ = true;
}

}  // namespace fedavg::data
