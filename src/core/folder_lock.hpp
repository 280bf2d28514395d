// One job at a time in an output folder: rank 0 holds an exclusive lock (flock) on OUT/.lock from before it
// claims the folder until the job ends, so a second job on the same --out is refused at once, naming the first.
#pragma once

#include <filesystem>

namespace fedavg::core {

class FolderLock {
 public:
  // Creates `dir` if needed and takes the lock, writing this process's id and host into the lock file. Throws
  // InputError naming the job that holds it ("pid P on host H"), or core::Error if the file cannot be made.
  explicit FolderLock(const std::filesystem::path& dir);
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock();  // releases the lock (the file stays: removing it would race with a job taking it)

  static constexpr const char* kName = ".lock";

 private:
  int fd_ = -1;
};

}  // namespace fedavg::core
