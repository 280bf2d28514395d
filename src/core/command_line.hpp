// The command line: paths, corpora, flags and settings overrides, validated before anything else runs. Throws
// InputError naming the flag ("command line: --dim abc: ...").
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/fault.hpp"
#include "core/settings.hpp"

namespace fedavg::core {

// How the job prepares its config from the corpora when no --config is given (python/prepare.py's options).
struct PrepareOptions {
  int vocab_size = 0;  // 0: no cap, every word seen min_count times
  int min_count = 5;
  int test_windows = 1000;
  bool stopwords = false;
  std::string similarity;  // --similarity F: copied to OUT/config/similarity.tsv (eval_every)
  std::string analogies;   // --analogies F: copied to OUT/config/analogies.txt
};

struct CommandLine {
  std::optional<std::filesystem::path> config_dir;  // --config; none: the job prepares OUT/config itself
  std::filesystem::path out_dir = "trained";
  std::filesystem::path python_dir;  // --python, default <source>/python
  std::vector<std::string> corpora;  // one pipeline per file
  bool help = false;
  bool version = false;
  bool resume = false;              // continue the run whose checkpoint is in out_dir
  bool overwrite = false;           // replace the run in out_dir (kept until the new run's first checkpoint)
  std::filesystem::path init_from;  // --init-from RUN.h5: a new run starts from that run's weights, word by word
  std::string restarted;            // --restarted REASON: this launch takes up a job that failed (scripts/supervise.py)
  std::vector<Fault> faults;        // --inject-fault, for tests
  std::vector<Override> overrides;  // --set KEY=VALUE, --KEY VALUE
  PrepareOptions prepare;
};

// Parses argv. --help and --version need nothing else; otherwise at least one corpus is required.
CommandLine parse_command_line(int argc, char** argv);

// Usage text for --help: the options and every cfg.json key with its range and default.
std::string usage();

}  // namespace fedavg::core
