// The run's checkpoint as HDF5: one dataset per named parameter, the vocabulary (row i of a table is word i), each
// learner's opaque state (optimizer, RNG) under /learner_state/<i>, each pipeline's read position, the strategy's
// state, a summary of each corpus file, and the run counters as attributes (strings as UTF-8 text, counters as
// integers). Written to a temporary file and renamed, so a crash during the write leaves the previous checkpoint
// intact.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/corpus_summary.hpp"
#include "core/read_position.hpp"

namespace fedavg::core {

struct NamedArray {
  std::string name;
  std::vector<std::size_t> shape;
  const float* data;  // row-major, prod(shape) values
};

struct CheckpointInfo {
  std::int64_t round = 0;
  double test_loss = 0.0;
  double train_loss = 0.0;
  double first_loss = 0.0;
  double windows_per_learner = 0.0;  // stored rounded, as an integer
  double seconds = 0.0;              // training time so far
  double sync_bytes = 0.0;           // bytes of weights exchanged so far; stored as an integer
  std::uint64_t seed = 0;
  std::string data_name;
  std::string strategy;  // a run resumes only with the strategy that wrote its checkpoint
};

// What a pipeline has given: windows trained from it, all runs of a job together, and windows in a whole
// pass over its corpus file (0 if not known yet).
struct PipelineProgress {
  double trained = 0.0;
  double pass_windows = 0.0;
};
// The passes over the corpora that `progress` holds: the fewest of any pipeline, or with shards (each entry then
// holds the windows of one epoch over all the corpora) the epochs over all; NaN while a pass is not known.
double epochs_trained(const std::vector<PipelineProgress>& progress, bool sharded);

// With shards: one shard of the corpora (bytes [begin, end) of corpus file `file`), the epochs in which a
// Tokenizer has read all of it, and the windows the Filter made of it (-1 if not known yet).
struct ShardProgress {
  std::int64_t file = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t finished = 0;
  std::int64_t windows = -1;
};

struct Checkpoint {
  CheckpointInfo info;
  std::vector<std::string> names;                         // parameter datasets, in file order
  std::vector<std::vector<float>> arrays;                 // their values
  std::vector<std::vector<std::uint8_t>> learner_states;  // one per learner (may be empty)
  std::vector<ReadPosition> positions;                    // one per pipeline
  std::vector<PipelineProgress> progress;                 // one per pipeline (zeros in older checkpoints)
  std::vector<std::string> restarts;                      // the job's restarts after failures, with reasons
  std::vector<float> strategy_state;                      // e.g. bmuf's block momentum (may be empty)
  std::vector<ShardProgress> shards;                      // with shards only (else empty)
  std::vector<CorpusSummary> corpora;                     // one per corpus file (empty in older checkpoints)
  std::vector<std::string> vocabulary;                    // as read (write_checkpoint takes it from the content)
};

// What a checkpoint is written from: views of the run's state.
struct CheckpointContent {
  const std::vector<NamedArray>& arrays;
  const CheckpointInfo& info;
  const std::vector<std::vector<std::uint8_t>>& learner_states;
  const std::vector<ReadPosition>& positions;
  const std::vector<float>& strategy_state;
  const std::vector<std::string>& vocabulary;
  const std::vector<PipelineProgress>& progress;
  const std::vector<std::string>& restarts;
  const std::vector<ShardProgress>& shards;
  const std::vector<CorpusSummary>& corpora;
};

// Writes path.tmp and renames it over path. If `die_before_rename` (fault injection), the process is killed
// after the temporary file is written, as a crash would. Throws core::Error naming the file.
void write_checkpoint(const std::filesystem::path& path, const CheckpointContent& content,
                      bool die_before_rename = false);

// The HDF5 library's version, "1.10.8".
std::string hdf5_version();

// Reads a checkpoint; `expected` lists the parameter names and sizes it must hold. Checks every dataset's
// checksum, the file's checksum of its attributes and structure (a checkpoint without one, of an older version,
// is refused), and that every counter is in its range. Throws core::Error naming the file and the field: a
// core::InputError (bad input: the same resume fails again) for an edited, forged or older file.
Checkpoint read_checkpoint(const std::filesystem::path& path,
                           const std::vector<std::pair<std::string, std::size_t>>& expected);

// The checksum of `path`'s attributes and structure that its root's attribute "xxh3" holds (see the file's
// structure_checksum): for tools and tests that edit a checkpoint on purpose. Throws core::Error naming the file.
std::uint64_t checkpoint_structure_checksum(const std::filesystem::path& path);

// What a new run takes from an earlier run's checkpoint (--init-from): its vocabulary (row i of a table is word
// i) and the parameters it holds of those asked for, by name, flat.
struct CheckpointWords {
  std::vector<std::string> vocabulary;
  std::map<std::string, std::vector<float>> arrays;
};

// Reads `path`'s vocabulary and the parameters of `names` it holds (checksums and finite values checked). Throws
// InputError naming the file when it is missing, a folder, or not a checkpoint with a vocabulary.
CheckpointWords read_checkpoint_words(const std::filesystem::path& path, const std::vector<std::string>& names);

}  // namespace fedavg::core
