#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <random>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/outputs.hpp"

namespace fs = std::filesystem;
using namespace fedavg::core;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace

TEST(Outputs, Word2VecAndReportFormats) {
  const auto dir = fs::temp_directory_path() / "fedavg_outputs";
  fs::create_directories(dir);
  const Matrix m{2, 3, {1.0f, 0.5f, -2.0f, 0.0f, 3.25f, 1e-3f}};
  write_text_embeddings(dir / "e.txt", dir / "e.w2v.txt", {"in", "beginning"}, m);
  EXPECT_EQ(slurp(dir / "e.w2v.txt"), "2 3\nin 1 0.5 -2\nbeginning 0 3.25 0.001\n");
  EXPECT_EQ(slurp(dir / "e.txt"), "1 0.5 -2\n0 3.25 0.001\n");
  EXPECT_FALSE(fs::exists(dir / "e.txt.tmp"));
  EXPECT_FALSE(fs::exists(dir / "e.w2v.txt.tmp"));
  EXPECT_THROW(write_text_embeddings(dir / "bad.txt", dir / "bad.w2v.txt", {"one"}, m), Error);
  EXPECT_FALSE(fs::exists(dir / "bad.txt"));
  fs::remove_all(dir);
}

// Every value reads back as the same float, in a file of many write chunks (8 MB each) whose rows all arrive.
TEST(Outputs, TextValuesReadBackExactly) {
  const auto dir = fs::temp_directory_path() / "fedavg_outputs_exact";
  fs::create_directories(dir);
  std::mt19937 gen(7);
  std::normal_distribution<float> value(0.0f, 0.3f);
  Matrix m{6000, 300, {}};
  for (std::size_t i = 0; i < m.rows * m.cols; ++i) m.data.push_back(value(gen) * std::pow(10.0f, float(i % 9) - 6));
  std::vector<std::string> words;
  for (std::size_t i = 0; i < m.rows; ++i) words.push_back("w" + std::to_string(i));
  write_text_embeddings(dir / "e.txt", dir / "e.w2v.txt", words, m);
  ASSERT_GT(fs::file_size(dir / "e.w2v.txt"), std::uintmax_t{2} * (8u << 20));
  std::ifstream w2v(dir / "e.w2v.txt"), txt(dir / "e.txt");
  std::size_t rows = 0, cols = 0;
  w2v >> rows >> cols;
  ASSERT_EQ(rows, m.rows);
  ASSERT_EQ(cols, m.cols);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    std::string word;
    w2v >> word;
    ASSERT_EQ(word, words[i]);
    for (std::size_t j = 0; j < cols; ++j) {
      std::string a, b;
      w2v >> a;
      txt >> b;
      const float want = m.data[i * cols + j];
      differ += std::strtof(a.c_str(), nullptr) != want || std::strtof(b.c_str(), nullptr) != want;
    }
  }
  EXPECT_EQ(differ, 0u);
  std::string more;
  EXPECT_FALSE(w2v >> more);
  EXPECT_FALSE(txt >> more);
  fs::remove_all(dir);
}

TEST(Outputs, AtomicFileDroppedUncommitted) {
  const auto p = fs::temp_directory_path() / "fedavg_dropped.txt";
  write_file_atomic(p, "kept\n");
  {
    AtomicFile f(p);
    f.write("half of a new version");
  }  // never committed: the old file stays, the temporary is gone
  EXPECT_EQ(slurp(p), "kept\n");
  EXPECT_FALSE(fs::exists(fs::path(p.string() + ".tmp")));
  fs::remove(p);
}

TEST(Outputs, AtomicWriteReplacesWholeFile) {
  const auto p = fs::temp_directory_path() / "fedavg_atomic.txt";
  write_file_atomic(p, "first version, long\n");
  write_file_atomic(p, "second\n");
  EXPECT_EQ(slurp(p), "second\n");
  fs::remove(p);
}

TEST(Outputs, AResumedMetricsLogGivesAnOlderBuildsRowsTheNewColumnsEmpty) {
  const auto p = fs::temp_directory_path() / "fedavg_metrics_resumed.csv";
  {
    std::ofstream old(p);
    old << "round,windows_per_learner,seconds,test_loss,train_loss,sync_seconds,sync_bytes,similarity,analogy,"
           "restarts\n"
           "0,0,0.500,8.250000,nan,0.0000,0,nan,nan,0\n"
           "1,2560,1.250,7.500000,7.750000,0.0125,4096,nan,nan,0\n"
           "2,5120,2.500,7.250000,7.500000,0.0125,8192,nan,nan,0\n";
  }
  {
    MetricsLog log(p, 1);
    EXPECT_EQ(log.last_round(), 1);
    log.row({2, 5120, 2.75, 7.25, 7.5, 0.0125, 8192, 0.25, -std::nan(""), 1, 640, 0.125});
  }
  EXPECT_EQ(slurp(p),
            "round,windows_per_learner,seconds,test_loss,train_loss,sync_seconds,sync_bytes,similarity,analogy,"
            "restarts,through_windows,idle_seconds\n"
            "0,0,0.500,8.250000,nan,0.0000,0,nan,nan,0,,\n"
            "1,2560,1.250,7.500000,7.750000,0.0125,4096,nan,nan,0,,\n"
            "2,5120,2.750,7.250000,7.500000,0.0125,8192,0.2500,nan,1,640,0.1250\n");
  fs::remove(p);
}

TEST(Outputs, UnwritableFolderIsNamed) {
  try {
    ensure_writable_dir("/proc/fedavg_cannot_exist");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("output folder /proc/fedavg_cannot_exist"), std::string::npos) << e.what();
  }
}

TEST(Outputs, MetricsRows) {
  const auto p = fs::temp_directory_path() / "fedavg_metrics.csv";
  {
    MetricsLog log(p);
    log.row({0, 0, 0.5, 8.25});
    log.row({1, 2560, 1.25, 7.5, 7.75, 0.0125, 4096});
    log.row({2, 5120, 2.5, 7.25, 7.5, 0.0125, 8192, 0.25, -std::nan(""), 1, 640, 0.125});
  }
  EXPECT_EQ(slurp(p),
            "round,windows_per_learner,seconds,test_loss,train_loss,sync_seconds,sync_bytes,similarity,analogy,"
            "restarts,through_windows,idle_seconds\n"
            "0,0,0.500,8.250000,nan,0.0000,0,nan,nan,0,0,0.0000\n"
            "1,2560,1.250,7.500000,7.750000,0.0125,4096,nan,nan,0,0,0.0000\n"
            "2,5120,2.500,7.250000,7.500000,0.0125,8192,0.2500,nan,1,640,0.1250\n");
  fs::remove(p);
}
