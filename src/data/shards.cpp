#include "data/shards.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <numeric>

#include "core/error.hpp"
#include "data/corpus_file.hpp"
#include "data/line_reader.hpp"

namespace fedavg::data {
namespace {

// The offset just after the first '\n' at or after `from`, or, if it lies more than `max_line` bytes on (a line
// that data::LineReader reads in pieces), just after the first word boundary at or after `from`; `size` if there is
// neither.
std::int64_t next_cut(std::ifstream& in, const std::string& path, std::int64_t from, std::int64_t size,
                      std::int64_t max_line) {
  std::string chunk(1 << 16, '\0');
  in.clear();
  in.seekg(from);
  std::int64_t at = from;
  std::int64_t boundary = -1;  // just after the first word boundary
  while (at < size) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) throw core::InputError("corpus " + path + ": read error: " + std::strerror(errno));
    const void* nl = std::memchr(chunk.data(), '\n', got);
    const auto nl_at = nl == nullptr ? got : static_cast<std::size_t>(static_cast<const char*>(nl) - chunk.data());
    if (boundary < 0) {
      const auto b = std::find_if(chunk.data(), chunk.data() + nl_at, is_word_boundary);
      if (b != chunk.data() + nl_at) boundary = at + (b - chunk.data()) + 1;
    }
    if (nl != nullptr) {
      const std::int64_t line_end = at + static_cast<std::int64_t>(nl_at);
      return line_end - from <= max_line || boundary < 0 ? line_end + 1 : boundary;
    }
    at += static_cast<std::int64_t>(got);
    if (boundary >= 0 && at - from > max_line) return boundary;
  }
  return size - from <= max_line || boundary < 0 ? size : boundary;  // the file's end ends the line
}

constexpr std::int64_t kMinShardBytes = std::int64_t{16} << 10;
constexpr std::int64_t kMaxShardBytes = std::int64_t{64} << 20;

}  // namespace

std::int64_t default_shard_bytes(const std::vector<std::int64_t>& file_sizes) {
  if (file_sizes.empty()) return kMaxShardBytes;
  const std::int64_t smallest = *std::min_element(file_sizes.begin(), file_sizes.end());
  const std::int64_t total = std::accumulate(file_sizes.begin(), file_sizes.end(), std::int64_t{0});
  return std::min(kMaxShardBytes, std::max({kMinShardBytes, smallest / 32, total / 1024}));
}

std::vector<Shard> cut_shards(const std::vector<std::string>& corpora, std::int64_t shard_bytes,
                              std::int64_t max_line_bytes) {
  std::vector<std::int64_t> sizes;
  for (const auto& path : corpora) sizes.push_back(CorpusFile(path).size());  // regular files of a byte or more
  if (shard_bytes <= 0) shard_bytes = default_shard_bytes(sizes);
  std::vector<Shard> out;
  for (std::size_t f = 0; f < corpora.size(); ++f) {
    const std::string& path = corpora[f];
    const std::int64_t size = sizes[f];
    std::ifstream in(path, std::ios::binary);
    if (!in) throw core::CorpusError("corpus " + path + ": cannot open: " + std::strerror(errno));
    for (std::int64_t begin = 0; begin < size;) {
      const std::int64_t end = begin + shard_bytes >= size
                                   ? size
                                   : next_cut(in, path, begin + shard_bytes - 1, size, max_line_bytes);
      out.push_back({static_cast<std::int64_t>(f), begin, end});
      begin = end;
    }
  }
  return out;
}

}  // namespace fedavg::data
