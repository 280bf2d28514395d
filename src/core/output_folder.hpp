// The rule that nothing finished is lost: a run starts only in an output folder that holds no earlier run (a
// checkpoint, metrics, statistics, embeddings, or a config a run prepared), unless it continues that run (--resume) or
// replaces it (--overwrite). Replacing moves the earlier run's files into OUT/.previous and deletes them only
// once the new run's first checkpoint is written, so a kill in between loses nothing. Rank 0 alone calls these.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fedavg::core {

class OutputFolder {
 public:
  static constexpr const char* kPrevious = ".previous";

  // Creates the folder and checks it is writable. With neither `resume` nor `overwrite`, throws InputError if it
  // holds an earlier run, naming its files and both flags; with `overwrite`, moves that run into .previous.
  // `prepares_config`: this run writes DIR/config, so an existing one is an earlier run's (otherwise it may be
  // the user's own config folder). Throws core::Error if the folder cannot be made or written.
  static void claim(const std::filesystem::path& dir, bool resume, bool overwrite, bool prepares_config);
  // The new run's first checkpoint is safely written: deletes what claim() moved aside (nothing if none).
  static void commit(const std::filesystem::path& dir);
  // The files of a run in `dir`, by name, sorted (empty if none); with `config`, a config folder counts.
  static std::vector<std::string> run_files(const std::filesystem::path& dir, bool config);
};

}  // namespace fedavg::core
