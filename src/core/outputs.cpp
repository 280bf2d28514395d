#include "core/outputs.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/error.hpp"

namespace fedavg::core {
namespace {

void append_row(std::string& s, const float* row, std::size_t cols) {
  char buf[32];
  for (std::size_t j = 0; j < cols; ++j) {
    const int n = std::snprintf(buf, sizeof buf, j == 0 ? "%.7g" : " %.7g", static_cast<double>(row[j]));
    s.append(buf, static_cast<std::size_t>(n));
  }
  s.push_back('\n');
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  const auto tmp = std::filesystem::path(path.string() + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(tmp.string() + ": cannot write: " + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) throw Error(tmp.string() + ": write failed: " + std::strerror(errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error(path.string() + ": cannot replace: " + ec.message());
}

void ensure_writable_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("output folder " + dir.string() + ": cannot create: " + ec.message());
  if (!std::filesystem::is_directory(dir)) throw Error("output folder " + dir.string() + ": not a directory");
  const auto probe = dir / ".fedavg_write_test";
  std::ofstream out(probe);
  if (!out) throw Error("output folder " + dir.string() + ": not writable: " + std::strerror(errno));
  out.close();
  std::filesystem::remove(probe, ec);
}

void write_embeddings_text(const std::filesystem::path& path, const Matrix& m) {
  std::string s;
  s.reserve(m.rows * m.cols * 12);
  for (std::size_t i = 0; i < m.rows; ++i) append_row(s, m.data.data() + i * m.cols, m.cols);
  write_file_atomic(path, s);
}

void write_word2vec(const std::filesystem::path& path, const std::vector<std::string>& words, const Matrix& m) {
  if (words.size() != m.rows)
    throw Error("embeddings have " + std::to_string(m.rows) + " rows for " + std::to_string(words.size()) + " words");
  std::string s = std::to_string(m.rows) + " " + std::to_string(m.cols) + "\n";
  s.reserve(m.rows * (m.cols * 12 + 12));
  for (std::size_t i = 0; i < m.rows; ++i) {
    s += words[i];
    s.push_back(' ');
    append_row(s, m.data.data() + i * m.cols, m.cols);
  }
  write_file_atomic(path, s);
}

void write_word2vec_binary(const std::filesystem::path& path, const std::vector<std::string>& words,
                           const Matrix& m) {
  static_assert(sizeof(float) == 4, "float32 rows");
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the format's floats are little-endian, as this host's");
  if (words.size() != m.rows)
    throw Error("embeddings have " + std::to_string(m.rows) + " rows for " + std::to_string(words.size()) + " words");
  std::string s = std::to_string(m.rows) + " " + std::to_string(m.cols) + "\n";
  s.reserve(s.size() + m.rows * (m.cols * sizeof(float) + 16));
  for (std::size_t i = 0; i < m.rows; ++i) {
    s += words[i];
    s.push_back(' ');
    s.append(reinterpret_cast<const char*>(m.data.data() + i * m.cols), m.cols * sizeof(float));
    s.push_back('\n');
  }
  write_file_atomic(path, s);
}

MetricsLog::MetricsLog(const std::filesystem::path& path, long keep_through) : path_(path) {
  const std::string header =
      "round,windows_per_learner,seconds,test_loss,train_loss,sync_seconds,sync_bytes,similarity,analogy,restarts\n";
  std::string kept = header;
  if (keep_through >= 0) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      const long round = std::strtol(line.c_str(), nullptr, 10);
      if (line.empty() || round > keep_through) break;
      kept += line + "\n";
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
  std::snprintf(buf, sizeof buf, "%ld,%.0f,%.3f,%.6f,%.6f,%.4f,%.0f,%.4f,%.4f,%d\n", r.round, r.windows_per_learner,
                r.seconds, unsigned_nan(r.test_loss), unsigned_nan(r.train_loss), r.sync_seconds, r.sync_bytes,
                unsigned_nan(r.similarity), unsigned_nan(r.analogy), r.restarts);
  out_ << buf << std::flush;
  if (!out_) throw Error(path_.string() + ": write failed");
}

}  // namespace fedavg::core
