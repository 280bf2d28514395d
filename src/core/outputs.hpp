// The run's files in the output folder: embeddings (report text, word2vec text and binary), the per-round metrics CSV
// and the final statistics. Every file except the metrics log is written to a temporary name and renamed, so
// a crash never leaves a torn file.
#pragma once

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/matrix.hpp"

namespace fedavg::core {

// Writes `content` to path.tmp, flushes, and renames it over `path`. Throws core::Error naming the file.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

// Creates the folder and proves it writable; throws core::Error("output folder X: ...") if not.
void ensure_writable_dir(const std::filesystem::path& dir);

// The report's text format (one row per vocabulary word, values separated by spaces) at `report`, and word2vec's
// ("V dim" header, then "word v1 ... vdim" per row) at `word2vec`, in one pass: each value is formatted once, in
// the shortest form that reads back as the same float.
void write_text_embeddings(const std::filesystem::path& report, const std::filesystem::path& word2vec,
                           const std::vector<std::string>& words, const Matrix& m);
// word2vec binary format (gensim's binary=True): "V dim" header, then per row the word, a space, dim
// little-endian float32 values and a newline.
void write_word2vec_binary(const std::filesystem::path& path, const std::vector<std::string>& words, const Matrix& m);

// One row of the metrics log.
struct MetricsRow {
  long round = 0;
  double windows_per_learner = 0.0;
  double seconds = 0.0;
  double test_loss = 0.0;
  double train_loss = std::nan("");
  double sync_seconds = 0.0;
  double sync_bytes = 0.0;
  double similarity = std::nan("");
  double analogy = std::nan("");
  int restarts = 0;
  double through_windows = 0.0;
  double idle_seconds = 0.0;
};

// round,windows_per_learner,seconds,test_loss,train_loss,sync_seconds,sync_bytes,similarity,analogy,restarts,
// through_windows,idle_seconds — one flushed row per round (round 0, before training, has train_loss nan); sync_seconds
// is the time the round's weight exchange took (broadcast + averaging collectives; easgd: the Dispatcher's handling of
// the round's pushes); sync_bytes counts the weights exchanged since the run began; similarity (Spearman rho) and
// analogy (accuracy) are "nan" in rounds not scored; restarts counts the times the job was restarted after a failure
// (scripts/supervise.py) so far; through_windows: of the round's windows per learner, those its hosts' learners
// trained through the previous exchange (overlap; else 0); idle_seconds: the seconds a learner spent not training
// since its previous report, the learners' mean (the exchange and the waits for it and for Control).
class MetricsLog {
 public:
  // Starts a new log, or (resume) keeps the rows up to and including `keep_through` and appends after them. A kept
  // row written by an older build gets empty fields for the columns it lacks.
  explicit MetricsLog(const std::filesystem::path& path, long keep_through = -1);
  // The round of the last row kept when resuming (-1 if none).
  long last_round() const { return last_round_; }
  void row(const MetricsRow& r);

 private:
  std::filesystem::path path_;
  std::ofstream out_;
  long last_round_ = -1;
};

}  // namespace fedavg::core
