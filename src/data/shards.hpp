// Shards: the corpus files cut into byte ranges of about a given size, each ending at a line end (or at the
// end of its file), so that many pipelines can share one big file. Every byte of every file is in exactly one
// shard, in file order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fedavg::data {

struct Shard {
  std::int64_t file = 0;   // index into the corpus list
  std::int64_t begin = 0;  // bytes [begin, end) of the file
  std::int64_t end = 0;

  bool operator==(const Shard& o) const { return file == o.file && begin == o.begin && end == o.end; }
};

// Cuts every file into shards of at least `shard_bytes` (the last of a file may be shorter; a file smaller than
// that is one shard): each shard ends at the first line end at or after `shard_bytes` past its start. Reads only
// around the cuts. Throws core::InputError naming the file if it cannot be read or is empty.
std::vector<Shard> cut_shards(const std::vector<std::string>& corpora, std::int64_t shard_bytes);

}  // namespace fedavg::data
