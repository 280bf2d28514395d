// Shards: the corpus files cut into byte ranges of about a given size, each ending at a line end (or at the
// end of its file; inside a line longer than max_line_bytes, such as text8's one line, just after a word
// boundary), so that many pipelines can share one big file. Every byte of every file is in exactly one shard, in
// file order.
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

// The shard size when none is set: small enough that the smallest file is cut into about 32 shards (so the files
// are read in step, data::ShardQueue, to within a few hundredths of a pass), but at least 16 KiB, at least the
// whole corpus's 1/1024th (so a large corpus is not cut into too many), and at most 64 MiB.
std::int64_t default_shard_bytes(const std::vector<std::int64_t>& file_sizes);

// Cuts every file into shards of at least `shard_bytes` (0: default_shard_bytes; the last of a file may be
// shorter; a file smaller than that is one shard): each shard ends at the first line end at or after `shard_bytes`
// past its start, or, where none follows within `max_line_bytes` (a line longer than that, which data::LineReader
// reads in pieces), just after the first word boundary there. Reads only around the cuts. Throws core::CorpusError
// naming the file if it is not a regular file, cannot be read or is empty (data::CorpusFile).
std::vector<Shard> cut_shards(const std::vector<std::string>& corpora, std::int64_t shard_bytes,
                              std::int64_t max_line_bytes = std::int64_t{1} << 62);

}  // namespace fedavg::data
