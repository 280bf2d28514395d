// Run configuration: the command line (paths, corpora) and cfg.json (training settings), validated up front.
// Loading throws InputError with "file:line: what is wrong" so the user can fix the input in one go.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fault.hpp"

namespace fedavg::core {

// How learners' models are combined (docs/strategies.md); "strategy" in cfg.json.
enum class StrategyKind { FedAvg, Bsp, Bmuf, Easgd, Hogwild };
// The cfg.json name of a strategy.
const char* strategy_name(StrategyKind k);

// How waiting ranks sleep (comm::WaitPolicy); "wait_profile" in cfg.json.
enum class WaitProfile { Auto, Plain, Oversubscribed };

// Settings read from cfg.json. Required: data_name, bpe, bs, target. Everything else has a default.
struct Settings {
  std::string data_name;        // run name, used in output file names
  int bpe = 0;                  // batches per learner per round
  int bs = 0;                   // windows per batch
  double target = 0.0;          // stop once the test loss is at or below this
  int window = 2;               // half-width: a window is 2*window context words around one target
  int dim = 32;                 // embedding dimension
  double lr = 0.0;              // learner learning rate; 0: the model's own default (neg 0.1, softmax 0.01)
  std::uint64_t seed = 1;       // same seed -> same initial weights on every rank
  int max_rounds = 1000;        // stop after this many rounds
  double max_seconds = 3600.0;  // stop after this much wall time
  std::string model = "neg";    // a model named in MODELS of python/library.py ("neg", "softmax", ...)
  bool cross_lines = false;     // may a window span a line end?
  bool cross_oov = false;       // may a window span a word that is not in the vocabulary?
  double sample = 1e-3;         // word2vec subsampling threshold (0: off); needs counts in vocab.txt
  bool train = true;            // false: learners skip the model step (pipeline benchmarks)
  StrategyKind strategy = StrategyKind::FedAvg;
  double block_lr = 1.0;        // bmuf: step size of the outer update
  double block_momentum = 0.0;  // bmuf: momentum of the outer update
  bool nesterov = false;        // bmuf: Nesterov outer momentum (DiLoCo)
  double elastic_alpha = 0.0;   // easgd: moving rate; 0: 0.9 / learners (beta = 0.9 in Zhang et al. 2015)
  int slow_learners = 0;        // the first this many learners run slow_factor times slower (for studies)
  double slow_factor = 1.0;     // a slowed learner sleeps (slow_factor - 1) x the time of each of its steps
  bool fixed_batch_order = false;  // Batcher deals to its learners in a fixed rotation (reproducible runs)
  bool balance_rounds = false;  // fedavg/bsp/bmuf: the first learner done ends the round for all (shared cores)
  double liveness_seconds = 120.0;  // longest wait for any peer before it is declared dead
  WaitProfile wait_profile = WaitProfile::Auto;  // auto: oversubscribed when a node has more ranks than cores
  int torch_threads = 1;        // intra-op threads per learner
  int text_block_bytes = 1 << 18;   // text per Tokenizer read (whole lines)
  int window_block = 4096;      // windows per Filter -> Batcher message
  int credits = 4;              // blocks a stage may have in flight to the next one
  int token_cache_mb = 64;      // a corpus whose ids fit is tokenized once; later passes replay them (0: off)
  int prefetch_rounds = 2;      // rounds of windows a Batcher keeps ready per learner
  int shuffle_windows = 1 << 18;  // a Batcher draws each batch at random from this many windows (0: text order)
  int checkpoint_every = 1;     // rounds between HDF5 checkpoints
  int eval_every = 0;           // rounds between word-similarity/analogy scores in the metrics (0: never)
  double max_loss_ratio = 10.0;  // a test loss above this times the untrained model's is an error (0: never)
  std::int64_t max_line_bytes = std::int64_t{64} << 20;  // a longer corpus line is an error
  nlohmann::json model_args = nlohmann::json::object();  // passed to the model untouched

  int window_width() const { return 2 * window + 1; }
  std::int64_t windows_per_round() const { return static_cast<std::int64_t>(bpe) * bs; }
  // The dict handed to python/engine.py (plus vocab_size, added by the bridge).
  nlohmann::json to_json() const;
};

// Parses cfg.json text. `path` only labels messages. Throws InputError.
Settings parse_settings(const std::string& text, const std::string& path);
// Reads and parses a cfg.json file. Throws InputError.
Settings load_settings(const std::filesystem::path& path);

// Everything a rank needs to know about the run.
struct Config {
  std::filesystem::path config_dir;  // holds vocab.txt, test.txt, cfg.json
  std::filesystem::path out_dir;     // outputs go here
  std::filesystem::path python_dir;  // holds library.py, engine.py, textpipe.py, ... (python/ or a copy)
  std::vector<std::string> corpora;  // one pipeline per file
  bool show_help = false;
  bool resume = false;               // continue from the checkpoint in out_dir
  std::vector<Fault> faults;         // --inject-fault, for tests
  Settings settings;

  std::filesystem::path vocab_path() const { return config_dir / "vocab.txt"; }
  std::filesystem::path test_path() const { return config_dir / "test.txt"; }
  std::filesystem::path cfg_path() const { return config_dir / "cfg.json"; }
  // Optional, for eval_every: WordSim353-style pairs and questions-words analogies.
  std::filesystem::path similarity_path() const { return config_dir / "similarity.tsv"; }
  std::filesystem::path analogies_path() const { return config_dir / "analogies.txt"; }
  int pipelines() const { return static_cast<int>(corpora.size()); }
};

// Usage text for --help.
std::string usage();

// Parses the command line and, unless --help was given, reads cfg.json. Throws InputError.
Config load_config(int argc, char** argv);

}  // namespace fedavg::core
