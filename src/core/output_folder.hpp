// The rule that nothing finished is lost: a run starts only in an output folder that holds no earlier run (a
// checkpoint, or statistics or embeddings), unless it continues that run (--resume) or replaces it (--overwrite);
// what a run that never reached a checkpoint left (a prepared config, metrics) is no earlier run. Replacing moves the
// earlier run's files into OUT/.previous and deletes them only once the new run's first checkpoint is written, so a
// kill in between loses nothing. Rank 0 alone calls these.
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
  // Files of a run that never reached a checkpoint and never ended (a failed set-up: a prepared config, metrics)
  // are no earlier run: they are deleted, and returned by name. With `resume`, throws InputError if there is no
  // checkpoint. `prepares_config`: this run writes DIR/config, so an existing one is an earlier run's (otherwise
  // it may be the user's own config folder). Throws core::Error if the folder cannot be made or written.
  static std::vector<std::string> claim(const std::filesystem::path& dir, bool resume, bool overwrite,
                                        bool prepares_config);
  // The new run's first checkpoint is safely written: deletes what claim() moved aside (nothing if none).
  static void commit(const std::filesystem::path& dir);
  // The files of a run in `dir`, by name, sorted (empty if none); with `config`, a config folder counts.
  static std::vector<std::string> run_files(const std::filesystem::path& dir, bool config);
};

}  // namespace fedavg::core
