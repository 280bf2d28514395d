// A read-only memory map of a whole file. Owns the mapping and unmaps it when destroyed; cannot be copied.
// Pages read stay resident (and count in the process's RSS) until release() gives them back.
#pragma once

#include <cstddef>
#include <filesystem>

namespace fedavg::data {

class MappedFile {
 public:
  // Maps `path` read-only. Throws core::Error naming the file if it cannot be opened or mapped. An empty file
  // maps to no bytes.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return static_cast<const char*>(base_); }
  std::size_t size() const { return size_; }
  // Drops the whole pages inside [begin, end) from this process's memory (the file and the page cache keep
  // them; a later read maps them in again). Keeps a sequential reader's RSS bounded.
  void release(std::size_t begin, std::size_t end) const;

 private:
  void unmap() noexcept;
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace fedavg::data
