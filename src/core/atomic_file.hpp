// A file that appears whole or not at all: written to PATH.tmp and renamed over PATH by commit(). Dropped (the
// temporary removed) when destroyed uncommitted, so a failed or interrupted write never leaves a torn file. The
// temporary is always a new file of this process: whatever stood at PATH.tmp (a leftover, or a link planted to
// make the write land elsewhere) is removed first, never followed.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace fedavg::core {

class AtomicFile {
 public:
  // Creates PATH.tmp for writing (O_CREAT | O_EXCL | O_NOFOLLOW); throws core::Error naming it.
  explicit AtomicFile(std::filesystem::path path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  void write(const char* data, std::size_t n);
  void write(const std::string& s) { write(s.data(), s.size()); }
  // Writes out and renames PATH.tmp over PATH (a link at PATH is replaced, not followed); throws core::Error
  // naming the file.
  void commit();

 private:
  void close_fd();

  std::filesystem::path path_;
  std::filesystem::path tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

// Creates `path` as a new file for writing, as AtomicFile creates its temporary: an entry already there (a file,
// or a link, which is not followed) is removed first. Returns the descriptor, or -1 with errno set.
int open_new_file(const std::filesystem::path& path);

}  // namespace fedavg::core
