#include "training/job_setup.hpp"

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "bridge/interpreter.hpp"
#include "bridge/plain_corpus.hpp"
#include "bridge/prepare.hpp"
#include "build_info.hpp"
#include "comm/communicator.hpp"
#include "comm/environment.hpp"
#include "comm/wait_policy.hpp"
#include "core/checkpoint.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/output_folder.hpp"
#include "core/outputs.hpp"
#include "core/physical_memory.hpp"
#include "training/collectives/topology.hpp"
#include "training/run_plan.hpp"
#include "training/warm_start.hpp"

namespace fedavg::training {
namespace {

namespace fs = std::filesystem;

// The files of a prepared config folder that every rank must see.
constexpr const char* kConfigFiles[] = {"cfg.json", "vocab.txt", "test.txt", "heldout.json"};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// prepare.prepare_job's options: the command line's preparation flags and the keys it needs.
nlohmann::json prepare_options(const core::CommandLine& line, std::int64_t max_line_bytes) {
  nlohmann::json o{{"min_count", line.prepare.min_count},
                   {"test_windows", line.prepare.test_windows},
                   {"stopwords", line.prepare.stopwords}};
  if (line.prepare.vocab_size > 0) o["vocab_size"] = line.prepare.vocab_size;  // else no cap
  // prepare reads a line longer than this in pieces, as the Tokenizer does, and refuses a longer word first.
  o["max_line_bytes"] = max_line_bytes;
  if (!line.prepare.similarity.empty()) o["similarity"] = line.prepare.similarity;
  if (!line.prepare.analogies.empty()) o["analogies"] = line.prepare.analogies;
  for (const auto& ov : line.overrides) {
    if (ov.key != "window" && ov.key != "seed" && ov.key != "model" && ov.key != "data_name" && ov.key != "cross_oov")
      continue;
    try {
      o[ov.key] = nlohmann::json::parse(ov.value);
    } catch (const nlohmann::json::parse_error&) {
      o[ov.key] = ov.value;
    }
  }
  return o;
}

// Rank 0's prepared config, packed as (name, size, bytes) per file, to every rank; a rank whose copy of the
// folder differs (another host's disk) writes the files. Waits for rank 0 to prepare: up to `seconds`.
void ship_config(const core::Config& cfg, const comm::Communicator& world, double seconds) {
  std::string pack;
  if (world.rank() == 0) {
    for (const char* name : kConfigFiles) {
      const fs::path p = cfg.config_dir / name;
      if (!fs::exists(p)) continue;
      const std::string body = read_file(p);
      pack += std::string(name) + '\n' + std::to_string(body.size()) + '\n' + body;
    }
  }
  const auto deadline = comm::Deadline::after(seconds);
  std::int64_t size = static_cast<std::int64_t>(pack.size());
  world.ibcast(&size, 1, 0).wait_until(deadline);
  pack.resize(static_cast<std::size_t>(size));
  world.ibcast(reinterpret_cast<std::uint8_t*>(pack.data()), pack.size(), 0).wait_until(deadline);
  if (world.rank() == 0) return;
  std::istringstream in(pack);
  std::string name, length;
  while (std::getline(in, name) && std::getline(in, length)) {
    std::string body(std::stoull(length), '\0');
    in.read(body.data(), static_cast<std::streamsize>(body.size()));
    const fs::path p = cfg.config_dir / name;
    if (fs::exists(p) && read_file(p) == body) continue;
    fs::create_directories(cfg.config_dir);
    core::write_file_atomic(p, body);
  }
}

// A compressed corpus is read through its plain copy (bridge::PlainCorpus): every rank takes the copy's path in
// its place, the same on every host.
void use_plain_copies(core::Config& cfg, bridge::Interpreter& py) {
  bridge::PlainCorpus plain(py);
  for (std::size_t i = 0; i < cfg.corpora.size(); ++i) {
    if (const auto copy = plain.path(cfg.corpora[i], cfg.plain_corpora_dir())) {
      cfg.compressed[i] = cfg.corpora[i];
      cfg.corpora[i] = *copy;
    }
  }
}

// Rank 0 writes the plain copies it reads (preparing the config, the corpora's fingerprints, shards); each
// Tokenizer makes sure of those of its host before it reads.
void write_plain_copies(const core::Config& cfg, bridge::Interpreter& py) {
  for (const auto& [i, source] : cfg.compressed) {
    bridge::PlainCorpus(py).ensure(source, cfg.plain_corpora_dir());
    std::printf("fedavg_mpi: corpus %s is read through its plain copy %s\n", source.c_str(), cfg.corpora[i].c_str());
  }
  std::fflush(stdout);
}

// A resume of a prepared run that moves its stop rules (--epoch, --max-rounds, --max-seconds, --target) writes them
// into the run's cfg.json, so the folder still says how the run was made and the next --resume goes on from them.
// The other settings a resume may change are its own and stay out of the file.
void record_stop_rules(const fs::path& cfg_json, const std::vector<core::Override>& overrides) {
  static const std::set<std::string> stop_rules = {"max_epochs", "max_rounds", "max_seconds", "target"};
  std::vector<core::Override> moved;
  for (const auto& o : overrides)
    if (stop_rules.count(o.key) > 0) moved.push_back(o);
  if (moved.empty()) return;
  nlohmann::json merged;
  core::load_settings(cfg_json, moved, &merged);
  core::write_file_atomic(cfg_json, merged.dump(2) + "\n");
}

// How long the other ranks may wait while rank 0 prepares: the liveness limit, plus a second per MB of corpus (a
// compressed file counts as the plain text it may hold, up to kExpands times its size, which rank 0 first writes).
double prepare_seconds(const core::Config& cfg) {
  constexpr double kExpands = 10;
  double bytes = 0;
  for (std::size_t i = 0; i < cfg.corpora.size(); ++i) {
    const bool packed = cfg.compressed.count(i) > 0;
    std::error_code ec;
    const auto n = fs::file_size(packed ? cfg.compressed.at(i) : cfg.corpora[i], ec);
    if (!ec) bytes += static_cast<double>(n) * (packed ? kExpands : 1);
  }
  return core::Settings{}.liveness_seconds * comm::kIndirect + bytes / 1e6;
}

// Refuses sizes whose buffers alone would not fit in the machine's memory (each counted once: a lower bound of what
// the job allocates): a round's windows, which a Batcher keeps ready for prefetch_rounds rounds and a learner holds
// while it trains them, and the shuffle pool.
void check_memory(const core::Config& cfg, const RunPlan& plan) {
  const core::Settings& s = cfg.settings;
  const double window_bytes = 4.0 * s.window_width();  // int32 ids
  const auto round = plan.windows_per_round(s);
  core::check_fits(static_cast<double>(s.prefetch_rounds + 1) * static_cast<double>(round) * window_bytes,
                   cfg.where("bs"),
                   "\"bs\" (" + std::to_string(s.bs) + ") x the batches a learner trains a round (bpe or add_bpe: " +
                       std::to_string(plan.learner_bpe) + "), " + std::to_string(round) + " windows of " +
                       std::to_string(s.window_width()) + " ids that the Batcher keeps ready for " +
                       std::to_string(s.prefetch_rounds) + " rounds (prefetch_rounds) and the learner holds for one,",
                   "lower bs or bpe");
  core::check_fits(static_cast<double>(s.shuffle_windows) * window_bytes, cfg.where("shuffle_windows"),
                   "\"shuffle_windows\" (" + std::to_string(s.shuffle_windows) + " windows of " +
                       std::to_string(s.window_width()) + " ids in a Batcher's shuffle pool)",
                   "lower shuffle_windows");
}

}  // namespace

core::Config settle_config(const core::CommandLine& line, const comm::Communicator& world, bridge::Interpreter& py,
                           std::optional<core::FolderLock>& lock) {
  core::Config cfg(line);
  use_plain_copies(cfg, py);
  // A bad override fails now, on every rank alike, before anything is written or prepared.
  const auto given = core::parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1})", "cfg.json",
                                          line.overrides);
  if (cfg.prepared && !cfg.resume && given.eval_every > 0 && line.prepare.similarity.empty() &&
      line.prepare.analogies.empty())
    throw core::InputError(
        "command line: eval_every scores the embeddings on word pairs or analogy questions: give "
        "--similarity F (WordSim353 format) or --analogies F (questions-words format)");
  if (world.rank() == 0) {
    // A checkpoint to start from is checked before anything is written: for a prepared run its dim is the command
    // line's (or the default), for a given config the config's.
    if (!cfg.init_from.empty())
      training::check_init_from(cfg.init_from,
                                cfg.prepared ? given.dim : core::load_settings(cfg.cfg_path(), line.overrides).dim);
    lock.emplace(cfg.out_dir);
    const auto leftovers = core::OutputFolder::claim(cfg.out_dir, cfg.resume, cfg.overwrite, cfg.prepared);
    if (!leftovers.empty()) {
      std::string names;
      for (const auto& f : leftovers) names += (names.empty() ? "" : ", ") + f;
      std::printf(
          "fedavg_mpi: output folder %s: replaced %s, left by a run that stopped before its first "
          "checkpoint\n",
          cfg.out_dir.string().c_str(), names.c_str());
    }
    if (cfg.prepared && cfg.resume && !fs::exists(cfg.cfg_path()))
      throw core::InputError("output folder " + cfg.out_dir.string() + ": nothing to resume (no " +
                             cfg.cfg_path().string() + ", which a run without --config prepares)");
    write_plain_copies(cfg, py);
    if (cfg.prepared && cfg.resume) record_stop_rules(cfg.cfg_path(), line.overrides);
    if (cfg.prepared && !cfg.resume) {
      const std::string summary = bridge::Prepare(py).run(cfg.corpora, cfg.config_dir,
                                                          prepare_options(line, given.max_line_bytes));
      // The overrides go into the prepared cfg.json, so the folder alone says how the run was made.
      nlohmann::json merged;
      core::load_settings(cfg.cfg_path(), line.overrides, &merged);
      core::write_file_atomic(cfg.cfg_path(), merged.dump(2) + "\n");
      std::printf("%s\nfedavg_mpi: prepared the config in %s\n", summary.c_str(), cfg.config_dir.string().c_str());
      std::fflush(stdout);
    }
  }
  if (cfg.prepared) ship_config(cfg, world, prepare_seconds(cfg));
  cfg.settings = core::load_settings(cfg.cfg_path(), line.overrides, nullptr, &cfg.origins);
  return cfg;
}

RunPlan plan_run(const core::Config& cfg, const Topology& topology, const StrategyTraits& traits, int pipelines) {
  if (cfg.settings.exchange == core::Exchange::Sparse && !traits.lock_step) {
    const auto at = cfg.origins.find("exchange");
    throw core::InputError((at != cfg.origins.end() ? at->second : cfg.cfg_path().string()) +
                           ": \"exchange\": \"sparse\" applies to fedavg, bsp, bmuf and diloco (easgd exchanges "
                           "every weight; hogwild's learners share one copy)");
  }
  const auto given = [&](const char* key) { return cfg.origins.count(key) > 0; };
  if (given("overlap") && cfg.settings.overlap && cfg.settings.fixed_batch_order) {
    const auto at = cfg.origins.find("overlap");
    throw core::InputError(at->second +
                           ": \"overlap\": true and \"fixed_batch_order\": true exclude each other "
                           "(learners that train on through the exchange ask for batches out of the "
                           "fixed rotation)");
  }
  const auto plan = RunPlan::of(cfg.settings, topology,
                                {given("add_power"), given("combine"), given("add_bpe"), given("sparse_rows"),
                                 given("overlap"), given("sparse_values")},
                                traits, pipelines);
  check_memory(cfg, plan);
  return plan;
}

void warn_learners_beyond_cores(const Topology& topology, const core::RankMap& map, const core::RankInfo& me) {
  if (me.role != core::Role::Learner) return;
  const int member = map.learner_index(me.rank) + 1, members = map.learners() + 1;
  for (const auto& host : topology.learners_by_host(members)) {
    if (host.front() != member) continue;
    const int cores = comm::WaitPolicy::usable_cores();
    if (static_cast<int>(host.size()) > cores)
      core::warn(me, "this host runs " + std::to_string(host.size()) + " learners on the " + std::to_string(cores) +
                         (cores == 1 ? " core" : " cores") +
                         " it gives the job: learners beyond the cores share them and slow the job (one learner "
                         "per core: on one host -n cores + 4)");
  }
}

std::string versions(bridge::Interpreter& py) {
  return std::string("fedavg_mpi ") + FEDAVG_VERSION + "\n" + comm::Environment::library_version() + "\n" +
         py.versions() + "\nHDF5 " + core::hdf5_version() + "\n";
}

}  // namespace fedavg::training
