#include "core/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "core/error.hpp"

namespace fedavg::core {
namespace {

// What the lock file says of the job that holds it: "pid P on host H" (as written by FolderLock).
std::string holder(int fd) {
  char buf[256] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text.empty() ? "a job that has not yet said which" : text;
}

}  // namespace

FolderLock::FolderLock(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("output folder " + dir.string() + ": cannot create: " + ec.message());
  const auto path = dir / kName;
  // Never through a link: the lock file is the folder's own.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(path.string() + ": cannot open the output folder's lock: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string who = err == EWOULDBLOCK ? holder(fd_) : std::string();
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw Error(path.string() + ": cannot lock: " + std::strerror(err));
    throw InputError("output folder " + dir.string() + " is in use by another job (" + who +
                     "): wait for it to end, or give this one another --out");
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string me = "pid " + std::to_string(::getpid()) + " on host " + host + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error(path.string() + ": cannot write: " + std::strerror(err));
  }
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

}  // namespace fedavg::core
