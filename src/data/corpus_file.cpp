#include "data/corpus_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.hpp"

namespace fedavg::data {
namespace {

// What a file that is not a regular file is, for messages.
const char* kind_of(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe), which can be read only once";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

std::string show_time(const timespec& t) {
  char when[64] = "?";
  struct tm tm {};
  if (::gmtime_r(&t.tv_sec, &tm) != nullptr) std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return when;
}

}  // namespace

CorpusFile::CorpusFile(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0)
    throw core::CorpusError("corpus " + path_ + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw core::CorpusError("corpus " + path_ + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode))
    throw core::CorpusError("corpus " + path_ + ": not a regular file (" + kind_of(st.st_mode) +
                            "): give a regular file");
  size_ = static_cast<std::int64_t>(st.st_size);
  if (size_ <= 0) throw core::CorpusError("corpus " + path_ + ": the file is empty");
  device_ = st.st_dev;
  inode_ = st.st_ino;
  modified_ = st.st_mtim;
}

void CorpusFile::changed(const std::string& what) const {
  throw core::CorpusError("corpus " + path_ + ": changed while the job reads it: " + what +
                          "; a corpus must stay as it is until the job ends");
}

void CorpusFile::check_unchanged() const {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) changed(std::string("it is gone (") + std::strerror(errno) + ")");
  if (st.st_dev != device_ || st.st_ino != inode_)
    changed("another file now has its name (inode " + std::to_string(st.st_ino) + ", was " + std::to_string(inode_) +
            ")");
  const auto size = static_cast<std::int64_t>(st.st_size);
  if (size != size_)
    changed("it now has " + std::to_string(size) + " bytes, " + std::to_string(size_) + " when the job opened it");
  if (st.st_mtim.tv_sec != modified_.tv_sec || st.st_mtim.tv_nsec != modified_.tv_nsec)
    changed("it was modified at " + show_time(st.st_mtim) + " (same size; last modified at " + show_time(modified_) +
            " when the job opened it)");
}

}  // namespace fedavg::data
