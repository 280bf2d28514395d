// A file that appears whole or not at all: written to PATH.tmp and renamed over PATH by commit(). Dropped (the
// temporary removed) when destroyed uncommitted, so a failed or interrupted write never leaves a torn file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>

namespace fedavg::core {

class AtomicFile {
 public:
  // Opens PATH.tmp for writing; throws core::Error naming it.
  explicit AtomicFile(std::filesystem::path path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  void write(const char* data, std::size_t n);
  void write(const std::string& s) { write(s.data(), s.size()); }
  // Flushes and renames PATH.tmp over PATH; throws core::Error naming the file.
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace fedavg::core
