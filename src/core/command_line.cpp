#include "core/command_line.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "core/error.hpp"
#include "core/paths.hpp"

namespace fedavg::core {
namespace {

// fastText's, gensim's and word2vec's names for settings keys (and for keys of model_args), where the meaning is
// the same, and a flag of its own for the neg model's learning-rate schedule.
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> a = {{"epoch", "max_epochs"},
                                                       {"epochs", "max_epochs"},
                                                       {"iter", "max_epochs"},
                                                       {"ws", "window"},
                                                       {"size", "dim"},
                                                       {"vector_size", "dim"},
                                                       {"alpha", "lr"},
                                                       {"negative", "model_args.negatives"},
                                                       {"neg", "model_args.negatives"},
                                                       {"lr_schedule", "model_args.lr_schedule"}};
  return a;
}

[[noreturn]] void bad(const std::string& what) {
  throw InputError("command line: " + what + " (fedavg_mpi --help lists the options)");
}

int positive_int(const std::string& flag, const std::string& value) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used != value.size() || v < 1 || v > 100'000'000)
    throw InputError("command line: " + flag + " " + value + ": must be a whole number from 1 to 100000000");
  return static_cast<int>(v);
}

// The edit distance between a and b (insertions, deletions, substitutions and swaps of neighbours, each 1).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// Every option the parser takes, as typed: the flags, the cfg.json keys as --key-name and their aliases.
std::vector<std::string> known_options() {
  std::vector<std::string> out = {"--help",         "--version",  "--resume",     "--overwrite", "--stopwords",
                                  "--config",       "--out",      "--python",     "--restarted", "--init-from",
                                  "--inject-fault", "--set",      "--vocab-size", "--min-count", "--test-windows",
                                  "--similarity",   "--analogies"};
  auto dashed = [](std::string key) {
    std::replace(key.begin(), key.end(), '_', '-');
    return "--" + key;
  };
  for (const auto& key : settings_keys()) out.push_back(dashed(key));
  for (const auto& [alias, key] : aliases()) out.push_back(dashed(alias));
  return out;
}

// The option nearest to `typed` (a flag without its value: "--epoc", "-epoch"), or "" when none is close: at most
// 2 edits away, and fewer than half its letters.
std::string nearest_option(const std::string& typed) {
  const std::string name = typed.rfind("--", 0) == 0 ? typed : "-" + typed;
  std::string best;
  std::size_t best_d = 3;
  for (const auto& option : known_options()) {
    const std::size_t d = edit_distance(name, option);
    if (d < best_d && 2 * d < name.size() - 2) {
      best = option;
      best_d = d;
    }
  }
  return best;
}

// What to do instead of a flag of word2vec's, gensim's or fastText's that fedavg_mpi has no use for (by its
// name without dashes, '-' as '_'), or "".
std::string advice_for(const std::string& typed) {
  static const std::map<std::string, std::string> advice = {
      {"threads",
       "the work is spread over MPI ranks: set their number with mpiexec -n (on one host about its "
       "cores + 4: the Dispatcher and a pipeline's three ranks need little CPU; one Learner per core)"},
      {"cbow", "fedavg_mpi always trains CBOW: leave the option out"},
      {"sg", "fedavg_mpi trains CBOW only (models neg, neg_autograd and softmax): skip-gram is not supported"},
      {"hs",
       "hierarchical softmax is not supported: --model neg (negative sampling, the default) or --model "
       "softmax (the full softmax)"}};
  std::string key = typed.substr(typed.find_first_not_of('-'));
  std::replace(key.begin(), key.end(), '-', '_');
  if (key == "workers" || key == "thread" || key == "cores") key = "threads";
  if (key == "skip_gram" || key == "skipgram") key = "sg";
  const auto it = advice.find(key);
  return it == advice.end() ? "" : it->second;
}

// One pass over argv: each argument is a flag without a value, a flag with one (after '=' or in the next
// argument), a cfg.json key, or a corpus file.
class ArgvParser {
 public:
  ArgvParser(int argc, char** argv) : argc_(argc), argv_(argv) { c_.python_dir = default_python_dir(); }

  CommandLine parse() {
    for (i_ = 1; i_ < argc_; ++i_) {
      arg_ = argv_[i_];
      eq_ = arg_.find('=');
      name_ = arg_.substr(0, eq_);
      if (!take_switch() && !take_valued() && !take_prepare_number()) take_setting_or_corpus();
    }
    if (!c_.help && !c_.version) check();
    return c_;
  }

 private:
  // The flag's value: after '=' or the next argument.
  std::string value() {
    if (eq_ != std::string::npos) return arg_.substr(eq_ + 1);
    if (i_ + 1 >= argc_) bad(name_ + " needs a value");
    return argv_[++i_];
  }

  // --help, --version, --resume, --overwrite, --stopwords.
  bool take_switch() {
    if (arg_ == "-h" || arg_ == "--help") c_.help = true;
    else if (arg_ == "--version") c_.version = true;
    else if (arg_ == "--resume") c_.resume = true;
    else if (arg_ == "--overwrite") c_.overwrite = true;
    else if (arg_ == "--stopwords") c_.prepare.stopwords = prepare_options_ = true;
    else return false;
    return true;
  }

  // --config, --out, --python, --restarted, --init-from, --inject-fault, --set, --similarity, --analogies.
  bool take_valued() {
    if (name_ == "--config") c_.config_dir = value();
    else if (name_ == "--out") c_.out_dir = value();
    else if (name_ == "--python") c_.python_dir = value();
    else if (name_ == "--restarted") c_.restarted = value();
    else if (name_ == "--init-from") c_.init_from = value();
    else if (name_ == "--inject-fault") c_.faults.push_back(parse_fault(value()));
    else if (name_ == "--set") take_set(value());
    else if (name_ == "--similarity" || name_ == "--analogies") take_eval_file();
    else return false;
    return true;
  }

  // --similarity F, --analogies F: evaluation files the job copies into the config it prepares.
  void take_eval_file() {
    (name_ == "--similarity" ? c_.prepare.similarity : c_.prepare.analogies) = value();
    prepare_options_ = true;
  }

  void take_set(const std::string& kv) {
    const auto at = kv.find('=');
    if (at == std::string::npos || at == 0) bad("--set " + kv + ": expected KEY=VALUE");
    c_.overrides.push_back({kv.substr(0, at), kv.substr(at + 1), "--set " + kv});
  }

  // --vocab-size, --min-count, --test-windows.
  bool take_prepare_number() {
    static const std::map<std::string, int PrepareOptions::*> numbers = {{"--vocab-size", &PrepareOptions::vocab_size},
                                                                         {"--min-count", &PrepareOptions::min_count},
                                                                         {"--test-windows",
                                                                          &PrepareOptions::test_windows}};
    std::string name = name_;  // gensim's spelling, --min_count, too
    if (name.rfind("--", 0) == 0) std::replace(name.begin() + 2, name.end(), '_', '-');
    const auto it = numbers.find(name);
    if (it == numbers.end()) return false;
    c_.prepare.*(it->second) = positive_int(name_, value());
    prepare_options_ = true;
    return true;
  }

  // --KEY VALUE for a cfg.json key (or a fastText name for one), else a corpus file.
  void take_setting_or_corpus() {
    if (arg_.size() > 2 && arg_.rfind("--", 0) == 0) {
      std::string key = name_.substr(2);
      std::replace(key.begin(), key.end(), '-', '_');
      if (const auto alias = aliases().find(key); alias != aliases().end()) key = alias->second;
      if (!is_settings_key(key) && key.rfind("model_args.", 0) != 0) unknown_option();
      const std::string v = value();
      // gensim's --negative is a count: checked here, before the job prepares its config, as the settings are.
      if (key == "model_args.negatives") positive_int(name_, v);
      c_.overrides.push_back({key, v, name_ + " " + v});
    } else if (arg_.size() > 1 && arg_[0] == '-') {
      unknown_option();
    } else {
      c_.corpora.push_back(arg_);
    }
  }

  [[noreturn]] void unknown_option() const {
    if (const std::string instead = advice_for(name_); !instead.empty())
      bad("unknown option " + name_ + ": " + instead);
    const std::string near = nearest_option(name_);
    bad("unknown option " + arg_ + (near.empty() ? "" : ": did you mean " + near + "?"));
  }

  // What a run needs besides --help and --version.
  void check() const {
    if (c_.corpora.empty()) bad("no corpus file given");
    if (c_.resume && c_.overwrite)
      bad("--resume continues the run in the --out folder, --overwrite replaces it: not both");
    if (c_.resume && !c_.init_from.empty())
      bad("--resume continues the run in the --out folder, --init-from starts a new one from another run's weights: "
          "not both");
    if (prepare_options_ && c_.config_dir)
      bad("--vocab-size, --min-count, --test-windows, --stopwords, --similarity and --analogies only apply when the "
          "job prepares its config (no --config; put similarity.tsv and analogies.txt in the --config folder)");
  }

  const int argc_;
  char** const argv_;
  CommandLine c_;
  bool prepare_options_ = false;  // a --vocab-size, --min-count, --test-windows, --stopwords, ... was given
  int i_ = 0;                     // the argument being parsed
  std::string arg_;               // argv_[i_]
  std::string::size_type eq_ = std::string::npos;  // where its '=' is
  std::string name_;                               // it up to its '='
};

}  // namespace

std::string usage() {
  return "usage: mpiexec -n N fedavg_mpi [options] corpus1.txt [corpus2.txt ...]\n"
         "Each corpus file gets a pipeline (Tokenizer, Filter, Batcher), or --pipelines P share them; several files\n"
         "(or pipelines) are cut into shards that the pipelines read in step, so --epoch E trains E passes over\n"
         "each file. N must be at least 4 * pipelines + 1, and the ranks left over are learners.\n"
         "\n"
         "options:\n"
         "  --config DIR   folder with vocab.txt, test.txt and cfg.json; without it the job prepares one from the\n"
         "                 corpora into OUT/config (vocabulary, counts, held-out test lines)\n"
         "  --out DIR      folder for weights, embeddings, metrics and statistics (default: ./trained)\n"
         "  --resume       continue the run whose checkpoint is in the --out folder\n"
         "  --overwrite    replace the run in the --out folder (it is kept until the new run's first checkpoint)\n"
         "  --set KEY=VALUE, --KEY VALUE\n"
         "                 override a cfg.json key (below); fastText's, gensim's and word2vec's names work too:\n"
         "                 --epoch, --epochs, --iter (max_epochs), --ws (window), --size, --vector-size (dim),\n"
         "                 --alpha (lr), --negative, --neg (model_args negatives); --set model_args.KEY=VALUE\n"
         "                 sets one key of model_args; --lr-schedule auto|linear|constant (model_args lr_schedule:\n"
         "                 auto, the default, decays linearly over a run of known length, docs/models.md)\n"
         "  --init-from RUN.h5  start this new run from the weights of an earlier run's checkpoint: a word both\n"
         "                 vocabularies hold keeps its vectors, a new word starts afresh\n"
         "  --vocab-size N, --min-count N, --test-windows N, --stopwords\n"
         "                 how the job prepares its config when there is no --config (defaults: no cap on the\n"
         "                 vocabulary, every word seen 5 times; 1000 test windows)\n"
         "  --similarity F, --analogies F\n"
         "                 word pairs (WordSim353) and analogy questions that eval_every scores the embeddings on;\n"
         "                 copied into the config the job prepares (with --config: similarity.tsv, analogies.txt)\n"
         "  --python DIR   folder with library.py, engine.py, textpipe.py, ... (default: " +
         default_python_dir().string() +
         ")\n"
         "  --restarted REASON  this launch takes up a job that failed for REASON (set by scripts/supervise.py;\n"
         "                 kept in the checkpoint, the metrics and the statistics)\n"
         "  --inject-fault RANK:ROUND:KIND  make RANK fail at ROUND (KIND: exception, kill, crash,\n"
         "                 hang, kill_in_checkpoint, pause=SECONDS: busy that long, answering nobody);\n"
         "                 pipeline ranks count blocks instead of rounds. For tests.\n"
         "  --version      print the versions of fedavg_mpi, MPI, Python, torch and HDF5\n"
         "  --help         print this\n"
         "\n"
         "cfg.json keys (docs/running.md explains them):\n" +
         settings_help();
}

CommandLine parse_command_line(int argc, char** argv) { return ArgvParser(argc, argv).parse(); }

}  // namespace fedavg::core
