#include "data/fingerprint.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/error.hpp"

namespace fedavg::data {
namespace {

constexpr std::int64_t kSummaryBytes = std::int64_t{1} << 20;

std::string read_range(std::ifstream& in, const std::filesystem::path& path, std::int64_t at, std::int64_t n) {
  std::string out(static_cast<std::size_t>(n), '\0');
  in.seekg(at);
  in.read(out.data(), n);
  if (in.gcount() != n) throw core::Error(path.string() + ": read error while fingerprinting the corpus");
  return out;
}

}  // namespace

void Fingerprint::mix(const void* bytes, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < n; ++i) {
    h_ ^= b[i];
    h_ *= 1099511628211ULL;
  }
}

void Fingerprint::add(std::string_view bytes) {
  mix(bytes.data(), bytes.size());
  add(static_cast<std::int64_t>(bytes.size()));  // "ab"+"c" differs from "a"+"bc"
}

void Fingerprint::add(std::int64_t value) {
  unsigned char le[8];  // little-endian, whatever the machine
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(value) >> (8 * i));
  mix(le, sizeof le);
}

void Fingerprint::add_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InputError(path.string() + ": cannot open: " + std::strerror(errno));
  std::vector<char> buf(1 << 16);
  std::int64_t total = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    mix(buf.data(), got);
    total += static_cast<std::int64_t>(got);
  }
  add(total);
}

void Fingerprint::add_file_summary(const std::filesystem::path& path) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  add((ec ? path : absolute).lexically_normal().string());
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw core::Error(path.string() + ": cannot stat: " + std::strerror(errno));
  const auto size = static_cast<std::int64_t>(st.st_size);
  add(size);
  add(static_cast<std::int64_t>(st.st_mtim.tv_sec));
  add(static_cast<std::int64_t>(st.st_mtim.tv_nsec));
  add_ends(path, size);
}

void Fingerprint::add_ends(const std::filesystem::path& path, std::int64_t size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::Error(path.string() + ": cannot open: " + std::strerror(errno));
  const std::int64_t head = std::min(size, kSummaryBytes);
  add(read_range(in, path, 0, head));
  const std::int64_t tail_at = std::max(head, size - kSummaryBytes);
  add(read_range(in, path, tail_at, size - tail_at));
}

core::CorpusSummary corpus_summary(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  const auto size = static_cast<std::int64_t>(st.st_size);
  try {
    Fingerprint f;
    f.add(size);
    f.add_ends(path, size);
    return {size, static_cast<std::int64_t>(f.value())};
  } catch (const core::Error&) {
    return {};
  }
}

std::uint64_t Fingerprint::value() const {
  std::uint64_t z = h_ + 0x9e3779b97f4a7c15ULL;  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string Fingerprint::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value()));
  return buf;
}

}  // namespace fedavg::data
