#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <sstream>

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
  write_word2vec(dir / "e.w2v.txt", {"in", "beginning"}, m);
  EXPECT_EQ(slurp(dir / "e.w2v.txt"), "2 3\nin 1 0.5 -2\nbeginning 0 3.25 0.001\n");
  write_embeddings_text(dir / "e.txt", m);
  EXPECT_EQ(slurp(dir / "e.txt"), "1 0.5 -2\n0 3.25 0.001\n");
  EXPECT_FALSE(fs::exists(dir / "e.txt.tmp"));
  EXPECT_THROW(write_word2vec(dir / "bad.txt", {"one"}, m), Error);
  fs::remove_all(dir);
}

TEST(Outputs, AtomicWriteReplacesWholeFile) {
  const auto p = fs::temp_directory_path() / "fedavg_atomic.txt";
  write_file_atomic(p, "first version, long\n");
  write_file_atomic(p, "second\n");
  EXPECT_EQ(slurp(p), "second\n");
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
    log.row({2, 5120, 2.5, 7.25, 7.5, 0.0125, 8192, 0.25, -std::nan(""), 1});
  }
  EXPECT_EQ(slurp(p),
            "round,windows_per_learner,seconds,test_loss,train_loss,sync_seconds,sync_bytes,similarity,analogy,"
            "restarts\n"
            "0,0,0.500,8.250000,nan,0.0000,0,nan,nan,0\n"
            "1,2560,1.250,7.500000,7.750000,0.0125,4096,nan,nan,0\n"
            "2,5120,2.500,7.250000,7.500000,0.0125,8192,0.2500,nan,1\n");
  fs::remove(p);
}
