#include "data/shards.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.hpp"

namespace fedavg::data {
namespace {

// The offset just after the first '\n' at or after `from`, or `size` if there is none.
std::int64_t next_line_start(std::ifstream& in, const std::string& path, std::int64_t from, std::int64_t size) {
  std::string chunk(1 << 16, '\0');
  in.clear();
  in.seekg(from);
  std::int64_t at = from;
  while (at < size) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) throw core::InputError("corpus " + path + ": read error: " + std::strerror(errno));
    const void* nl = std::memchr(chunk.data(), '\n', got);
    if (nl != nullptr) return at + (static_cast<const char*>(nl) - chunk.data()) + 1;
    at += static_cast<std::int64_t>(got);
  }
  return size;
}

}  // namespace

std::vector<Shard> cut_shards(const std::vector<std::string>& corpora, std::int64_t shard_bytes) {
  shard_bytes = std::max<std::int64_t>(shard_bytes, 1);
  std::vector<Shard> out;
  for (std::size_t f = 0; f < corpora.size(); ++f) {
    const std::string& path = corpora[f];
    std::ifstream in(path, std::ios::binary);
    if (!in) throw core::InputError("corpus " + path + ": cannot open: " + std::strerror(errno));
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::int64_t>(in.tellg());
    if (size <= 0) throw core::InputError("corpus " + path + ": the file is empty");
    for (std::int64_t begin = 0; begin < size;) {
      const std::int64_t end = begin + shard_bytes >= size ? size
                                                           : next_line_start(in, path, begin + shard_bytes - 1, size);
      out.push_back({static_cast<std::int64_t>(f), begin, end});
      begin = end;
    }
  }
  return out;
}

}  // namespace fedavg::data
