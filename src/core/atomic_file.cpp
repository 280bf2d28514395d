#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/error.hpp"

namespace fedavg::core {

int open_new_file(const std::filesystem::path& path) {
  // unlink removes a link itself, never its target; O_EXCL | O_NOFOLLOW then refuse anything planted in between.
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return -1;
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

AtomicFile::AtomicFile(std::filesystem::path path)
    : path_(std::move(path)), tmp_(path_.string() + ".tmp"), fd_(open_new_file(tmp_)) {
  if (fd_ < 0) throw Error(tmp_.string() + ": cannot write: " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  close_fd();
  if (committed_) return;
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void AtomicFile::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void AtomicFile::write(const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t wrote = ::write(fd_, data, n);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) throw Error(tmp_.string() + ": write failed: " + std::strerror(errno));
    data += wrote;
    n -= static_cast<std::size_t>(wrote);
  }
}

void AtomicFile::commit() {
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw Error(tmp_.string() + ": write failed: " + std::strerror(errno));
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) throw Error(path_.string() + ": cannot replace: " + ec.message());
  committed_ = true;
}

}  // namespace fedavg::core
