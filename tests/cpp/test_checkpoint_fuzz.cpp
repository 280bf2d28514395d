// The checkpoint reader (core::read_checkpoint, then training::ResumeCheck) on a few hundred mutated copies of one
// checkpoint, from a fixed seed: flipped bytes of datasets, edited, added and removed attributes and datasets, and
// forged values and learner-state headers written with checksums that match (as someone forging the file would
// write them). Each copy is refused with one line that names the file and the field, or reads back as the
// untouched file (a forged value in its range, only that value changed); none crashes or hangs.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/checkpoint.hpp"
#include "core/checksum.hpp"
#include "core/error.hpp"
#include "training/resume_check.hpp"

namespace fs = std::filesystem;
using fedavg::core::Checkpoint;

namespace {

constexpr unsigned kSeed = 20261127;
constexpr int kCases = 400;

// A learner state as engine.get_state writes it: a safetensors header that holds the state's JSON.
std::vector<std::uint8_t> learner_state(const std::string& json) {
  const std::string header = R"({"__metadata__":{"fedavg_state":")" + json + R"(","fedavg_kinds":"[]"}})";
  std::vector<std::uint8_t> bytes(8 + header.size(), 0);
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
  std::copy(header.begin(), header.end(), bytes.begin() + 8);
  return bytes;
}

// The untouched checkpoint: a 5 x 4 table, two learners, two pipelines, its vocabulary.
struct Original {
  std::vector<float> table = std::vector<float>(20);
  std::vector<fedavg::core::NamedArray> arrays;
  fedavg::core::CheckpointInfo info;
  std::vector<std::vector<std::uint8_t>> learner_states{learner_state("{\\\"step\\\": 3}"), learner_state("7")};
  std::vector<fedavg::core::ReadPosition> positions{{7, 1}, {4096, 0}};
  std::vector<float> strategy_state{0.5f, -0.25f};
  std::vector<std::string> vocabulary{"a", "b", "c", "d", "e"};
  std::vector<fedavg::core::PipelineProgress> progress{{100.0, 200.0}, {50.0, 0.0}};
  std::vector<std::string> restarts{"round 1: killed"};
  std::vector<fedavg::core::ShardProgress> shards;
  std::vector<fedavg::core::CorpusSummary> corpora{{4096, 12345}, {8192, 678}};

  Original() {
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = 0.1f * static_cast<float>(i);
    arrays.push_back({"embedding", {5, 4}, table.data()});
    info = {3, 2.5, 2.75, 3.5, 1200.0, 4.5, 640.0, 42, "toy", "fedavg"};
  }
  void write(const fs::path& path) const {
    fedavg::core::write_checkpoint(path, {arrays, info, learner_states, positions, strategy_state, vocabulary, progress,
                                          restarts, shards, corpora});
  }
  fedavg::training::ResumeCheck::Run run(const std::string& path) const {
    return {path, "toy", "fedavg",   {"a.txt", "b.txt"}, corpora,
            2,    false, "test.txt", vocabulary.size(),  fedavg::core::checksum(vocabulary)};
  }
};

// Reads `path` and runs the resume's checks on it; the error's message, "" if it is accepted.
std::string refusal(const fs::path& path, const Original& o, Checkpoint* read) {
  try {
    *read = fedavg::core::read_checkpoint(path, {{"embedding", o.table.size()}});
    fedavg::training::ResumeCheck(o.run(path.string())).check(*read);
  } catch (const fedavg::core::Error& e) {
    return e.what();
  }
  return "";
}

// Opens `path` for writing for the length of `edit`.
void edit_file(const fs::path& path, const std::function<void(hid_t)>& edit) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  edit(f);
  ASSERT_GE(H5Fclose(f), 0);
}

// Sets the checksum of the file's attributes and structure to match it, as a forger would.
void seal(const fs::path& path) {
  const std::uint64_t sum = fedavg::core::checkpoint_structure_checksum(path);
  edit_file(path, [&](hid_t f) {
    const hid_t a = H5Aopen(f, "xxh3", H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_UINT64, &sum);
    H5Aclose(a);
  });
}

// Replaces dataset `name` of `f` by `bytes` as `type` (n values of `size` bytes), with a matching checksum.
void put(hid_t f, const std::string& name, hid_t type, const void* data, hsize_t n, std::size_t size) {
  if (H5Lexists(f, name.c_str(), H5P_DEFAULT) > 0) H5Ldelete(f, name.c_str(), H5P_DEFAULT);
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t set = H5Dcreate2(f, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (n > 0) H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  const std::uint64_t sum = fedavg::core::checksum(data, n * size);
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(set, "xxh3", H5T_NATIVE_UINT64, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, H5T_NATIVE_UINT64, &sum);
  H5Aclose(attr);
  H5Sclose(scalar);
  H5Dclose(set);
  H5Sclose(space);
}

const std::array<const char*, 7> kNumbers = {"round",   "test_loss", "train_loss", "first_loss", "windows_per_learner",
                                             "seconds", "sync_bytes"};
const std::array<double, 12> kValues = {-1.0,
                                        0.0,
                                        1.0,
                                        2.0,
                                        1e15,
                                        -1e9,
                                        0.5,
                                        1e300,
                                        std::nan(""),
                                        std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(),
                                        3.0};

void set_number(hid_t f, const char* name, double v) {
  const hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  const hid_t type = H5Aget_type(a);
  if (H5Tget_class(type) == H5T_INTEGER) {
    const auto i = std::isfinite(v) && std::abs(v) < 9e18 ? static_cast<std::int64_t>(v) : std::int64_t{-7};
    H5Awrite(a, H5T_NATIVE_INT64, &i);
  } else {
    H5Awrite(a, H5T_NATIVE_DOUBLE, &v);
  }
  H5Tclose(type);
  H5Aclose(a);
}

// Flips `count` bytes of dataset `name`'s values in the file itself.
void flip_values(const fs::path& path, const std::string& name, std::mt19937& rng, int count) {
  haddr_t offset = HADDR_UNDEF;
  hsize_t size = 0;
  edit_file(path, [&](hid_t f) {
    const hid_t set = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
    offset = H5Dget_offset(set);
    size = H5Dget_storage_size(set);
    H5Dclose(set);
  });
  ASSERT_NE(offset, HADDR_UNDEF);
  std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
  for (int i = 0; i < count; ++i) {
    io.seekg(static_cast<std::streamoff>(offset + rng() % size));
    const auto at = io.tellg();
    char c = 0;
    io.read(&c, 1);
    io.seekp(at);
    c = static_cast<char>(c ^ static_cast<char>(1 + rng() % 255));
    io.write(&c, 1);
  }
}

// A forged learner state: its header cut, its length wrong, not JSON, JSON without the state, empty (as a learner
// whose state was not collected writes it), or a well-formed one whose fields are for the learner to check.
std::vector<std::uint8_t> forged_state(std::mt19937& rng) {
  auto bytes = learner_state("{\\\"step\\\": 3}");
  switch (rng() % 6) {
    case 0: bytes.resize(rng() % bytes.size()); break;
    case 1: bytes[rng() % 8] = static_cast<std::uint8_t>(rng()); break;
    case 2: bytes[8 + rng() % (bytes.size() - 8)] = static_cast<std::uint8_t>(rng()); break;
    case 3: {
      const std::string header = R"({"__metadata__":{"other":"1"}})";
      bytes.assign(8, 0);
      bytes[0] = static_cast<std::uint8_t>(header.size());
      bytes.insert(bytes.end(), header.begin(), header.end());
      break;
    }
    case 4: bytes.clear(); break;
    default: bytes = learner_state("{\\\"step\\\": -1e9}");
  }
  return bytes;
}

const std::array<const char*, 7> kFixedDatasets = {"embedding",      "learner_state/0",   "learner_state/1", "corpora",
                                                   "read_positions", "pipeline_progress", "strategy_state"};

class CheckpointFuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fedavg_checkpoint_fuzz_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    original_.write(dir_ / "original.h5");
    ASSERT_EQ(refusal(dir_ / "original.h5", original_, &untouched_), "");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Mutates a fresh copy with mutation `kind`; returns its path and sets `field` to what a refusal must name
  // ("A|B": either).
  fs::path mutate(int kind, std::mt19937& rng, std::string& field);

  Original original_;
  Checkpoint untouched_;
  fs::path dir_;
};

fs::path CheckpointFuzz::mutate(int kind, std::mt19937& rng, std::string& field) {
  const fs::path path = dir_ / "copy.h5";
  fs::copy_file(dir_ / "original.h5", path, fs::copy_options::overwrite_existing);
  const char* number = kNumbers[rng() % kNumbers.size()];
  const double value = kValues[rng() % kValues.size()];
  const std::string dataset = kFixedDatasets[rng() % kFixedDatasets.size()];
  switch (kind) {
    case 0:  // flipped values
      flip_values(path, dataset, rng, 1 + static_cast<int>(rng() % 4));
      field = "dataset " + dataset;
      break;
    case 1:  // an attribute edited, the file's checksum left as it was
      edit_file(path, [&](hid_t f) { set_number(f, number, value); });
      field = "xxh3";
      break;
    case 2:  // an attribute forged
      edit_file(path, [&](hid_t f) { set_number(f, number, value); });
      seal(path);
      field = std::string("attribute ") + number;
      break;
    case 3: {  // a row of pipeline_progress forged
      std::vector<double> rows{100.0, 200.0, 50.0, 0.0};
      rows[rng() % rows.size()] = value;
      edit_file(path, [&](hid_t f) { put(f, "pipeline_progress", H5T_NATIVE_DOUBLE, rows.data(), 4, 8); });
      seal(path);
      field = "dataset pipeline_progress";
      break;
    }
    case 4: {  // a learner state forged
      const auto bytes = forged_state(rng);
      edit_file(path, [&](hid_t f) { put(f, "learner_state/0", H5T_NATIVE_UINT8, bytes.data(), bytes.size(), 1); });
      seal(path);
      field = "learner_state/";
      break;
    }
    case 5: {  // a dataset removed, or one added
      const bool removed = rng() % 2 != 0;
      edit_file(path, [&](hid_t f) {
        if (removed) {
          H5Ldelete(f, dataset.c_str(), H5P_DEFAULT);
        } else {
          const float extra = 1.0f;
          put(f, "extra", H5T_NATIVE_FLOAT, &extra, 1, 4);
        }
      });
      // An optional dataset, or the last learner's state (a run of fewer learners), is missed only by the file's
      // checksum.
      field = removed ? "dataset " + dataset + "|xxh3" : "xxh3";
      break;
    }
    default: {  // the vocabulary of another run, forged
      const std::vector<std::string> words{"a", "b", "x", "d", "e"};
      edit_file(path, [&](hid_t f) {
        H5Ldelete(f, "vocabulary", H5P_DEFAULT);
        std::vector<const char*> texts;
        for (const auto& w : words) texts.push_back(w.c_str());
        const hid_t type = H5Tcopy(H5T_C_S1);
        H5Tset_size(type, H5T_VARIABLE);
        put(f, "vocabulary", type, texts.data(), texts.size(), 0);
        const hid_t set = H5Dopen2(f, "vocabulary", H5P_DEFAULT);
        const std::uint64_t sum = fedavg::core::checksum(words);
        const hid_t a = H5Aopen(set, "xxh3", H5P_DEFAULT);
        H5Awrite(a, H5T_NATIVE_UINT64, &sum);
        H5Aclose(a);
        H5Dclose(set);
        H5Tclose(type);
      });
      seal(path);
      field = "dataset vocabulary";
    }
  }
  return path;
}

// What the checkpoint's counters hold, to compare a read with the untouched file's.
std::vector<double> counters(const Checkpoint& c) {
  const auto& i = c.info;
  std::vector<double> v{static_cast<double>(i.round), i.test_loss, i.train_loss, i.first_loss,
                        i.windows_per_learner,        i.seconds,   i.sync_bytes};
  for (const auto& p : c.progress) v.insert(v.end(), {p.trained, p.pass_windows});
  return v;
}

// NaN equals NaN here: a counter read back as it was written.
bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

}  // namespace

TEST_F(CheckpointFuzz, EveryMutationIsRefusedNamingItsFieldOrReadsAsTheUntouchedFile) {
  std::mt19937 rng(kSeed);
  int refused = 0;
  for (int n = 0; n < kCases; ++n) {
    const int kind = static_cast<int>(rng() % 7);
    std::string field;
    const fs::path path = mutate(kind, rng, field);
    Checkpoint read;
    const std::string error = refusal(path, original_, &read);
    SCOPED_TRACE("case " + std::to_string(n) + " (seed " + std::to_string(kSeed) + "), mutation " +
                 std::to_string(kind) + ": " + error);
    if (!error.empty()) {
      ++refused;
      EXPECT_EQ(error.rfind(path.string() + ": ", 0), 0u);
      EXPECT_EQ(error.find('\n'), std::string::npos);
      const auto bar = field.find('|');
      EXPECT_TRUE(error.find(field.substr(0, bar)) != std::string::npos ||
                  (bar != std::string::npos && error.find(field.substr(bar + 1)) != std::string::npos))
          << "expected it to name " << field;
      continue;
    }
    // Accepted: only a forged value in its range, or an edit that wrote the value already there.
    EXPECT_TRUE(kind == 2 || kind == 3 || kind == 4 || kind == 1) << "accepted";
    EXPECT_EQ(read.arrays, untouched_.arrays);
    EXPECT_EQ(read.vocabulary, untouched_.vocabulary);
    EXPECT_EQ(read.positions.size(), untouched_.positions.size());
    if (kind == 1) {
      EXPECT_TRUE(same(counters(read), counters(untouched_)));
    }
    for (double v : counters(read)) EXPECT_TRUE(std::isnan(v) || (std::isfinite(v) && v >= 0)) << v;
  }
  EXPECT_GT(refused, kCases / 2);
}

TEST_F(CheckpointFuzz, AnUntouchedFileResealedReadsTheSame) {
  const fs::path path = dir_ / "copy.h5";
  fs::copy_file(dir_ / "original.h5", path);
  seal(path);
  Checkpoint read;
  ASSERT_EQ(refusal(path, original_, &read), "");
  EXPECT_TRUE(same(counters(read), counters(untouched_)));
}

TEST_F(CheckpointFuzz, AFileWithoutTheChecksumOfItsAttributesIsRefusedAsOlder) {
  const fs::path path = dir_ / "copy.h5";
  fs::copy_file(dir_ / "original.h5", path);
  edit_file(path, [](hid_t f) { H5Adelete(f, "xxh3"); });
  Checkpoint read;
  const std::string error = refusal(path, original_, &read);
  EXPECT_NE(error.find("attribute xxh3 of the file"), std::string::npos) << error;
  EXPECT_NE(error.find("a checkpoint of an older version"), std::string::npos) << error;
}
