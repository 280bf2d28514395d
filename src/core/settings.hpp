// The training settings: cfg.json, with any key overridden on the command line (--set KEY=VALUE, --KEY VALUE).
// One table describes every key (type, range, default, meaning); it validates the values and prints --help, so
// the two never disagree. A bad value throws InputError naming where it came from: "cfg.json:LINE: ..." or
// "command line: --dim abc: ...".
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/wait_profile.hpp"

namespace fedavg::core {

// How learners' models are combined (docs/strategies.md); "strategy" in cfg.json.
enum class StrategyKind { FedAvg, Bsp, Bmuf, Diloco, Easgd, Hogwild };
// The cfg.json name of a strategy.
const char* strategy_name(StrategyKind k);

// How lock-step rounds exchange weights: every weight, or only the rows that changed
// (training/exchange/sparse_exchange.hpp).
enum class Exchange { Auto, Dense, Sparse };
// Where the Dispatcher writes its checkpoints: on a thread of its own while the rounds go on, or between rounds.
enum class CheckpointBackground { Auto, Always, Never };
// The values the sparse exchange sends up the learner tree.
enum class ExchangeType { Float32, Float16, BFloat16, Int8 };
// How the sparse exchange averages a row: by each learner's share of the round's windows (what dense averaging
// does), or over the learners that sent the row, by their windows.
enum class SparseWeighting { Windows, Touched };
// How fedavg combines the learners' changes of a round (docs/strategies.md#fedavg): their window-weighted average,
// or their sum, each row's sum damped by how many learners changed it and how much their changes agree.
enum class Combine { Average, Add };

// A large model, in parameters (8M: 32 MB of weights): the size from which the "auto" choices that depend on it
// change, the exchange ("auto": sparse when the learners span hosts) and checkpoint_background ("auto": in the
// background, where a checkpoint takes a noticeable part of a round).
inline constexpr std::size_t kLargeModel = std::size_t{8} << 20;

// The meaning of every key, with its range, is in the key table (settings.cpp) and `fedavg_mpi --help`.
struct Settings {
  std::string data_name;
  int bpe = 0;
  int bs = 0;
  double target = 0.0;  // 0: no target
  int window = 2;
  int dim = 100;
  double lr = 0.0;  // 0: the model's own
  std::uint64_t seed = 1;
  int max_rounds = 1000;        // 0: no limit
  double max_seconds = 3600.0;  // 0: no limit
  double max_epochs = 0.0;      // 0: no limit
  std::string model = "neg";
  bool cross_lines = false;
  bool cross_oov = true;
  bool edge_windows = false;    // a run's first and last words are targets too, their windows cut short
  bool reduced_windows = true;  // each target's context reaches a random 1..window words each side
  double sample = 1e-3;
  bool train = true;
  StrategyKind strategy = StrategyKind::FedAvg;
  double block_lr = 1.0;
  double block_momentum = 0.3;
  bool nesterov = false;       // diloco: always
  double elastic_alpha = 0.0;  // 0: 0.9 / learners
  int slow_learners = 0;
  double slow_factor = 1.0;
  bool fixed_batch_order = false;
  bool balance_rounds = false;
  bool share_host = true;  // fedavg, bsp, bmuf, diloco: a host's learners train one shared copy of the weights
  Combine combine = Combine::Add;
  double add_power = 0.6;       // add: a row changed by k members moves by at least their mean times k^add_power
                                // (given, else training::RunPlan's)
  bool add_agreement = true;    // add: ... and by up to their sum where their changes disagree
  int add_bpe = 1;              // add, several learners: batches per member per round (0: bpe; hosts: RunPlan's)
  double exchange_share = 0.0;  // hosts of sharing learners: rounds grow until their overhead is this share
  bool overlap = false;         // fedavg across hosts: a host's learners train on through the exchange (RunPlan)
  Exchange exchange = Exchange::Auto;
  double sparse_rows = 1.0;                            // given, else training::RunPlan's
  ExchangeType sparse_values = ExchangeType::Float16;  // given, else training::RunPlan's
  SparseWeighting sparse_weighting = SparseWeighting::Touched;
  int full_sync_every = 0;   // 0: never
  int exchange_threads = 0;  // 0: the rank's share of its host's cores (core::share_of_cores)
  double liveness_seconds = 120.0;
  WaitProfile wait_profile = WaitProfile::Auto;
  double progress_seconds = 1.0;
  int torch_threads = 1;
  std::string device = "auto";  // auto, cpu, cuda, cuda:N (python/engine.py resolves it)
  int text_block_bytes = 1 << 18;
  int window_block = 4096;
  int credits = 4;
  int pipelines = 0;               // 0: one per corpus file
  double shard_mb = 0.0;           // 0: data::default_shard_bytes (with one corpus file and one pipeline: no shards)
  bool pipeline_per_file = false;  // each file's pipeline reads it whole, again and again: no shards
  bool token_cache = true;
  std::string token_cache_dir;  // empty: OUT/cache
  int prefetch_rounds = 2;
  int shuffle_windows = 1 << 18;
  int checkpoint_every = 0;          // 0: by time only (checkpoint_seconds)
  double checkpoint_seconds = 10.0;  // 0: by rounds only (checkpoint_every)
  CheckpointBackground checkpoint_background = CheckpointBackground::Auto;
  int eval_every = 0;
  double max_loss_ratio = 10.0;
  std::int64_t max_line_bytes = std::int64_t{1} << 20;  // longer lines are read in pieces of at most this
  nlohmann::json model_args = nlohmann::json::object();

  int window_width() const { return 2 * window + 1; }
  // Windows may hold empty context slots (-1): edge_windows or reduced_windows, with the neg model (the others'
  // steps take whole windows).
  bool windows_cut_short() const { return (edge_windows || reduced_windows) && model == "neg"; }
  // The dict handed to python/engine.py, as the user wrote it (model set-up adds the vocabulary, the run plan's
  // bpe, and the CPU where the plan keeps the weights in host memory).
  nlohmann::json to_json() const;
};

// One key set on the command line. `value` is read as JSON where it parses (10, 0.5, true, "x", {...}), else
// as a string; `flag` is how the user wrote it, for messages ("--set dim=10", "--dim 10").
struct Override {
  std::string key;
  std::string value;
  std::string flag;
};

// True if `key` is a cfg.json key.
bool is_settings_key(const std::string& key);
// Every cfg.json key, in the key table's order.
std::vector<std::string> settings_keys();

// Parses cfg.json text (`path` labels messages) with `overrides` applied on top. If `merged` is given it receives
// the resulting JSON object (what a reproducible cfg.json holds); if `origins` is, where each key that is set
// came from ("PATH:LINE" or "command line: --dim 10"). Throws InputError.
Settings parse_settings(const std::string& text, const std::string& path, const std::vector<Override>& overrides = {},
                        nlohmann::json* merged = nullptr, std::map<std::string, std::string>* origins = nullptr);
// Reads and parses a cfg.json file. Throws InputError.
Settings load_settings(const std::filesystem::path& path, const std::vector<Override>& overrides = {},
                       nlohmann::json* merged = nullptr, std::map<std::string, std::string>* origins = nullptr);

// Every key with its type and range, default and meaning, one per line, for --help.
std::string settings_help();

}  // namespace fedavg::core
