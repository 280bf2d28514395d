// Everything a rank knows about the run: the paths, the corpora and the flags of the command line, and the
// settings. Without --config the job prepares its config folder itself, as OUT/config (training::settle_config).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
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
  std::vector<std::string> corpora;  // one pipeline per file (a compressed file's plain copy in its place)
  // The compressed files the command line named, by their index in corpora (training::settle_config).
  std::map<std::size_t, std::string> compressed;
  bool prepared = false;            // the job prepared config_dir from the corpora (no --config)
  bool resume = false;              // continue from the checkpoint in out_dir
  bool overwrite = false;           // replace the run in out_dir
  std::string restarted;            // why the job this launch takes up failed (empty: not a restart)
  std::filesystem::path init_from;  // --init-from: the checkpoint whose weights a new run starts from (empty: none)
  std::vector<Fault> faults;        // --inject-fault, for tests
  Settings settings;
  // Where each key of the settings that is set came from ("PATH:LINE" or "command line: --dim 10").
  std::map<std::string, std::string> origins;

  // The paths and flags of `line`; settings stay default until loaded.
  explicit Config(const CommandLine& line);
  Config() = default;

  std::filesystem::path vocab_path() const { return config_dir / "vocab.txt"; }
  std::filesystem::path test_path() const { return config_dir / "test.txt"; }
  std::filesystem::path cfg_path() const { return config_dir / "cfg.json"; }
  // Where the plain copies of compressed corpora are kept (python/runtime/decompress.py).
  std::filesystem::path plain_corpora_dir() const { return out_dir / "cache"; }
  // The lines held out of the corpora for test.txt (python/prepare.py writes it when it does not write the
  // training text itself); the Tokenizers skip them.
  std::filesystem::path held_out_path() const { return config_dir / "heldout.json"; }
  // Optional, for eval_every: WordSim353-style pairs and questions-words analogies.
  std::filesystem::path similarity_path() const { return config_dir / "similarity.tsv"; }
  std::filesystem::path analogies_path() const { return config_dir / "analogies.txt"; }
  // The job's pipelines: `pipelines` in the settings, or one per corpus file.
  int pipelines() const { return settings.pipelines > 0 ? settings.pipelines : static_cast<int>(corpora.size()); }
  // The corpora are cut into shards that the Dispatcher hands to the pipelines (several files, shard_mb, or more
  // pipelines than files) unless pipeline_per_file says pipeline p reads corpus file p (as one file with one
  // pipeline does).
  bool sharded() const {
    const int files = static_cast<int>(corpora.size());
    return settings.shard_mb > 0 || pipelines() != files || (files > 1 && !settings.pipeline_per_file);
  }
  // shard_mb in bytes; 0 for data::default_shard_bytes.
  std::int64_t shard_bytes() const;
  // Where `key` was set, for messages: its origin, or cfg.json's path when it holds the default.
  std::string where(const std::string& key) const;
};

// The torch (and BLAS) threads the run will use, before its settings are loaded: the command line's, else
// cfg.json's (as for pipelines_hint), else the default. Python must know it when it starts.
int torch_threads_hint(const CommandLine& line);
// The pipelines the job will have, before its settings are loaded (the rank map needs them): the command line's
// `pipelines`, else that of cfg.json (--config's, or with --resume the one the job prepared in OUT/config), else
// one per corpus file. The loaded settings are checked against it.
int pipelines_hint(const CommandLine& line);
// The liveness_seconds the run will use, before its settings are loaded (the command line's, else cfg.json's, else
// the default): the rank's watcher ends a rank stopped by a signal for half of it from the start.
double liveness_hint(const CommandLine& line);
// Throws InputError unless the loaded settings give `pipelines` pipelines (what the rank map was built with), or if
// pipeline_per_file is set with shard_mb or a pipelines count other than the files'.
void check_pipelines(const Config& cfg, int pipelines);

}  // namespace fedavg::core
