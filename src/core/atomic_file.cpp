#include "core/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/error.hpp"

namespace fedavg::core {

AtomicFile::AtomicFile(std::filesystem::path path)
    : path_(std::move(path)), tmp_(path_.string() + ".tmp"), out_(tmp_, std::ios::binary | std::ios::trunc) {
  if (!out_) throw Error(tmp_.string() + ": cannot write: " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void AtomicFile::write(const char* data, std::size_t n) {
  out_.write(data, static_cast<std::streamsize>(n));
  if (!out_) throw Error(tmp_.string() + ": write failed: " + std::strerror(errno));
}

void AtomicFile::commit() {
  out_.flush();
  if (!out_) throw Error(tmp_.string() + ": write failed: " + std::strerror(errno));
  out_.close();
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) throw Error(path_.string() + ": cannot replace: " + ec.message());
  committed_ = true;
}

}  // namespace fedavg::core
