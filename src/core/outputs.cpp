#include "core/outputs.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace fedavg::core {
namespace {

// Rows are formatted into a buffer of about this many bytes, then written.
constexpr std::size_t kChunk = std::size_t{8} << 20;

// Each value in the shortest form that reads back as the same float.
void append_row(std::string& s, const float* row, std::size_t cols) {
  char buf[32];
  for (std::size_t j = 0; j < cols; ++j) {
    char* p = buf;
    if (j > 0) *p++ = ' ';
    p = std::to_chars(p, buf + sizeof buf, row[j]).ptr;
    s.append(buf, static_cast<std::size_t>(p - buf));
  }
  s.push_back('\n');
}

void check_words(const std::vector<std::string>& words, const Matrix& m) {
  if (words.size() != m.rows)
    throw Error("embeddings have " + std::to_string(m.rows) + " rows for " + std::to_string(words.size()) + " words");
}

// A file written in chunks of about kChunk bytes: append to text(), then done().
class ChunkedFile {
 public:
  ChunkedFile(const std::filesystem::path& path, const std::string& header) : file_(path), text_(header) {
    text_.reserve(kChunk + (std::size_t{1} << 16));
  }
  std::string& text() { return text_; }
  // After each row: writes the chunk once it is full.
  void row_done() {
    if (text_.size() < kChunk) return;
    file_.write(text_);
    text_.clear();
  }
  void done() {
    file_.write(text_);
    file_.commit();
  }

 private:
  AtomicFile file_;
  std::string text_;
};

std::string word2vec_header(const Matrix& m) { return std::to_string(m.rows) + " " + std::to_string(m.cols) + "\n"; }

}  // namespace

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  AtomicFile file(path);
  file.write(content);
  file.commit();
}

void ensure_writable_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("output folder " + dir.string() + ": cannot create: " + ec.message());
  if (!std::filesystem::is_directory(dir)) throw Error("output folder " + dir.string() + ": not a directory");
  const auto probe = dir / ".fedavg_write_test";
  const int fd = open_new_file(probe);  // a leftover probe, or a link planted there, is replaced, never followed
  if (fd < 0) throw Error("output folder " + dir.string() + ": not writable: " + std::strerror(errno));
  ::close(fd);
  std::filesystem::remove(probe, ec);
}

void write_text_embeddings(const std::filesystem::path& report, const std::filesystem::path& word2vec,
                           const std::vector<std::string>& words, const Matrix& m) {
  check_words(words, m);
  ChunkedFile bare(report, ""), named(word2vec, word2vec_header(m));
  std::string row;
  for (std::size_t i = 0; i < m.rows; ++i) {
    row.clear();
    append_row(row, m.data.data() + i * m.cols, m.cols);
    bare.text() += row;
    named.text() += words[i];
    named.text().push_back(' ');
    named.text() += row;
    bare.row_done();
    named.row_done();
  }
  bare.done();
  named.done();
}

void write_word2vec_binary(const std::filesystem::path& path, const std::vector<std::string>& words, const Matrix& m) {
  static_assert(sizeof(float) == 4, "float32 rows");
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the format's floats are little-endian, as this host's");
  check_words(words, m);
  ChunkedFile out(path, word2vec_header(m));
  for (std::size_t i = 0; i < m.rows; ++i) {
    out.text() += words[i];
    out.text().push_back(' ');
    out.text().append(reinterpret_cast<const char*>(m.data.data() + i * m.cols), m.cols * sizeof(float));
    out.text().push_back('\n');
    out.row_done();
  }
  out.done();
}

MetricsLog::MetricsLog(const std::filesystem::path& path, long keep_through) : path_(path) {
  const std::string header =
      "round,windows_per_learner,seconds,test_loss,train_loss,sync_seconds,sync_bytes,similarity,analogy,restarts,"
      "through_windows,idle_seconds\n";
  std::string kept = header;
  if (keep_through >= 0) {
    const auto header_fields = std::count(header.begin(), header.end(), ',');
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      const long round = std::strtol(line.c_str(), nullptr, 10);
      if (line.empty() || round > keep_through) break;
      // A row from an older build lacks the columns added since: they stay empty (not recorded).
      const auto fields = std::count(line.begin(), line.end(), ',');
      kept += line + std::string(static_cast<std::size_t>(std::max<long>(0, header_fields - fields)), ',') + "\n";
      last_round_ = round;
    }
  }
  write_file_atomic(path, kept);
  out_.open(path, std::ios::app);
  if (!out_) throw Error(path.string() + ": cannot write: " + std::strerror(errno));
}

namespace {
// printf writes a NaN with its sign bit set as "-nan"; the log always says "nan".
double unsigned_nan(double v) { return std::isnan(v) ? std::fabs(v) : v; }
}  // namespace

void MetricsLog::row(const MetricsRow& r) {
  char buf[320];
  std::snprintf(buf, sizeof buf, "%ld,%.0f,%.3f,%.6f,%.6f,%.4f,%.0f,%.4f,%.4f,%d,%.0f,%.4f\n", r.round,
                r.windows_per_learner, r.seconds, unsigned_nan(r.test_loss), unsigned_nan(r.train_loss), r.sync_seconds,
                r.sync_bytes, unsigned_nan(r.similarity), unsigned_nan(r.analogy), r.restarts, r.through_windows,
                r.idle_seconds);
  out_ << buf << std::flush;
  if (!out_) throw Error(path_.string() + ": write failed");
}

}  // namespace fedavg::core
