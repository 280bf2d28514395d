// A corpus file as the job first found it: a regular file with at least one byte, and its size, identity (device
// and inode) and modification time, against which each new pass over it is checked. A corpus that changes while a
// job reads it (shrunk, grown, rewritten, replaced or removed) ends the job rather than training on other text.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <string>

namespace fedavg::data {

class CorpusFile {
 public:
  // Stats `path` without opening it (a FIFO would block an open). Throws core::CorpusError naming the file unless
  // it is a regular file of at least one byte: "cannot open: No such file or directory", "is a directory",
  // "not a regular file (a character device): give a regular file", "the file is empty", ...
  explicit CorpusFile(std::string path);

  // Throws core::CorpusError naming the file and what changed if it is no longer the file found at construction,
  // of the same size, device, inode and modification time.
  void check_unchanged() const;

  const std::string& path() const { return path_; }
  std::int64_t size() const { return size_; }

 private:
  [[noreturn]] void changed(const std::string& what) const;
  std::string path_;
  std::int64_t size_ = 0;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  timespec modified_{};
};

}  // namespace fedavg::data
