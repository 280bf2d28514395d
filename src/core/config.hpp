// Everything a rank knows about the run: the paths, the corpora and the flags of the command line, and the
// settings. Without --config the job prepares its config folder itself, as OUT/config (training::settle_config).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/command_line.hpp"
#include "core/fault.hpp"
#include "core/settings.hpp"

namespace fedavg::core {

struct Config {
  std::filesystem::path config_dir;  // holds vocab.txt, test.txt, cfg.json (and heldout.json when prepared)
  std::filesystem::path out_dir;     // outputs go here
  std::filesystem::path python_dir;  // holds library.py, engine.py, textpipe.py, ... (python/ or a copy)
  std::vector<std::string> corpora;  // one pipeline per file
  bool prepared = false;             // the job prepared config_dir from the corpora (no --config)
  bool resume = false;               // continue from the checkpoint in out_dir
  bool overwrite = false;            // replace the run in out_dir
  std::string restarted;             // why the job this launch takes up failed (empty: not a restart)
  std::vector<Fault> faults;         // --inject-fault, for tests
  Settings settings;

  // The paths and flags of `line`; settings stay default until loaded.
  explicit Config(const CommandLine& line);
  Config() = default;

  std::filesystem::path vocab_path() const { return config_dir / "vocab.txt"; }
  std::filesystem::path test_path() const { return config_dir / "test.txt"; }
  std::filesystem::path cfg_path() const { return config_dir / "cfg.json"; }
  // The lines held out of the corpora for test.txt (python/prepare.py writes it when it does not write the
  // training text itself); the Tokenizers skip them.
  std::filesystem::path held_out_path() const { return config_dir / "heldout.json"; }
  // Optional, for eval_every: WordSim353-style pairs and questions-words analogies.
  std::filesystem::path similarity_path() const { return config_dir / "similarity.tsv"; }
  std::filesystem::path analogies_path() const { return config_dir / "analogies.txt"; }
  int pipelines() const { return static_cast<int>(corpora.size()); }
};

// The torch (and BLAS) threads the run will use, before its settings are loaded: the command line's, else
// cfg.json's, else the default. Python must know it when it starts.
int torch_threads_hint(const CommandLine& line);

}  // namespace fedavg::core
