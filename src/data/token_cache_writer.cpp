#include "data/token_cache_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace fedavg::data {
namespace {

// A name beside `path` that no concurrent writer of the same range uses (other pipelines, other hosts on a
// shared folder).
std::filesystem::path temporary_name(const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(std::random_device{}());
  return tmp;
}

}  // namespace

TokenCacheWriter::TokenCacheWriter(std::filesystem::path path, std::uint64_t key, std::int64_t range_begin,
                                   std::int64_t range_end)
    : path_(std::move(path)) {
  const std::filesystem::path folder = path_.has_parent_path() ? path_.parent_path() : ".";
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) throw core::Error(folder.string() + ": cannot create the token cache folder: " + ec.message());
#ifdef O_TMPFILE
  fd_ = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
#endif
  if (fd_ < 0) {
    tmp_ = temporary_name(path_);
    fd_ = ::open(tmp_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd_ < 0) throw core::Error(tmp_.string() + ": cannot create: " + std::strerror(errno));
  }
  std::memcpy(trailer_.magic, kCacheMagic, sizeof trailer_.magic);
  trailer_.key = key;
  trailer_.range_begin = range_begin;
  trailer_.range_end = range_end;
}

TokenCacheWriter::~TokenCacheWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (committed_ || tmp_.empty()) return;
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

std::string TokenCacheWriter::where() const {
  return tmp_.empty() ? path_.string() + " (being written)" : tmp_.string();
}

void TokenCacheWriter::write(const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ::ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw core::Error(where() + ": write error: " + std::strerror(n < 0 ? errno : EIO));
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

void TokenCacheWriter::add(std::int64_t text_begin, std::int64_t text_end, const std::vector<std::int32_t>& ids) {
  const std::int64_t first = index_.empty() ? 0 : index_.back().id_end;
  index_.push_back({text_begin, text_end, first, first + static_cast<std::int64_t>(ids.size())});
  write(ids.data(), ids.size() * sizeof(ids[0]));
}

void TokenCacheWriter::commit() {
  std::int64_t text = trailer_.range_begin;
  for (const auto& b : index_) {
    if (b.text_begin != text) throw core::Error(where() + ": the token cache's blocks leave a gap");
    text = b.text_end;
  }
  if (index_.empty() || text != trailer_.range_end)
    throw core::Error(where() + ": the token cache's blocks do not cover the byte range");
  trailer_.ids = index_.back().id_end;
  trailer_.blocks = static_cast<std::int64_t>(index_.size());
  write(index_.data(), index_.size() * sizeof(CacheBlock));
  write(&trailer_, sizeof trailer_);
  bool named = false;  // under path_ already
  if (tmp_.empty()) {
    // The unnamed file gets its name. An older file there (same key, so the same ids) is replaced through a
    // temporary name, as rename does.
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      named = true;
    } else if (errno == EEXIST) {
      tmp_ = temporary_name(path_);
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
        const int err = errno;
        tmp_.clear();
        throw core::Error(path_.string() + ": cannot create a temporary name beside it: " + std::strerror(err));
      }
    } else {
      throw core::Error(path_.string() + ": cannot create: " + std::strerror(errno));
    }
  }
  const int fd = std::exchange(fd_, -1);
  std::error_code ec;
  if (::close(fd) != 0) {
    const int err = errno;
    if (named) std::filesystem::remove(path_, ec);  // the destructor removes a temporary name
    throw core::Error(where() + ": write error: " + std::strerror(err));
  }
  if (!named) {
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) throw core::Error(tmp_.string() + ": cannot rename to " + path_.string() + ": " + ec.message());
  }
  committed_ = true;
}

}  // namespace fedavg::data
