#include "core/settings.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/json_depth.hpp"

namespace fedavg::core {
namespace {

using nlohmann::json;

// 1-based line of byte offset `pos` in `text`.
int line_of_offset(const std::string& text, std::size_t pos) {
  pos = std::min(pos, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

// 1-based line where "key" first appears as a JSON key, or 1 if it does not appear.
int line_of_key(const std::string& text, const std::string& key) {
  const auto pos = text.find('"' + key + '"');
  return pos == std::string::npos ? 1 : line_of_offset(text, pos);
}

std::string show(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// One value of a key, with where it came from, for messages.
struct Value {
  const json& v;
  const std::string& key;
  const std::string& where;  // "cfg.json:3" or "command line: --dim abc"

  [[noreturn]] void fail(const std::string& what) const { throw InputError(where + ": " + what); }
  [[noreturn]] void must_be(const std::string& what) const {
    fail("\"" + key + "\" must be " + what + ", got " + v.dump());
  }
};

// One cfg.json key: how to read it into Settings, and what --help says of it.
struct Key {
  std::string name;
  std::string type;     // "integer 1..4096", "true/false", ...
  std::string meaning;  // one line
  std::function<void(const Value&, Settings&)> read;
  std::function<std::string(const Settings&)> show_default;
  bool required = false;
};

Key integer(const char* name, int Settings::*m, long long lo, long long hi, const char* meaning) {
  return {name, "integer " + std::to_string(lo) + ".." + std::to_string(hi), meaning,
          [m, lo, hi](const Value& x, Settings& s) {
            if (!x.v.is_number_integer()) x.must_be("an integer");
            const long long v = x.v.get<long long>();
            if (v < lo || v > hi)
              x.fail("\"" + x.key + "\" must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                     ", got " + std::to_string(v));
            s.*m = static_cast<int>(v);
          },
          [m](const Settings& s) { return std::to_string(s.*m); }};
}

// A number in [lo, hi] (in (lo, hi] when `open_low`).
Key number(const char* name, double Settings::*m, double lo, double hi, const char* meaning, bool open_low = false) {
  return {name, "number " + (open_low ? "(" + show(lo) + ", " + show(hi) + "]" : show(lo) + ".." + show(hi)), meaning,
          [m, lo, hi, open_low](const Value& x, Settings& s) {
            if (!x.v.is_number()) x.must_be("a number");
            const double v = x.v.get<double>();
            if (!(open_low ? v > lo : v >= lo) || !(v <= hi))
              x.fail("\"" + x.key + "\" must be " +
                     (open_low ? "above " + show(lo) + " and at most " + show(hi)
                               : "between " + show(lo) + " and " + show(hi)) +
                     ", got " + show(v));
            s.*m = v;
          },
          [m](const Settings& s) { return show(s.*m); }};
}

Key boolean(const char* name, bool Settings::*m, const char* meaning) {
  return {name, "true/false", meaning,
          [m](const Value& x, Settings& s) {
            if (!x.v.is_boolean()) x.must_be("true or false");
            s.*m = x.v.get<bool>();
          },
          [m](const Settings& s) { return std::string(s.*m ? "true" : "false"); }};
}

template <typename E, std::size_t N>
Key choice(const char* name, E Settings::*m, const std::pair<const char*, E> (&table)[N], const char* meaning) {
  std::string names;
  for (const auto& [n, value] : table) names += (names.empty() ? "" : ", ") + std::string(n);
  return {name, "one of " + names, meaning,
          [m, &table, names](const Value& x, Settings& s) {
            if (!x.v.is_string()) x.must_be("one of " + names);
            const auto given = x.v.get<std::string>();
            for (const auto& [n, value] : table)
              if (given == n) {
                s.*m = value;
                return;
              }
            x.fail("\"" + x.key + "\" must be one of " + names + ", got \"" + given + "\"");
          },
          [m, &table](const Settings& s) {
            for (const auto& [n, value] : table)
              if (s.*m == value) return std::string(n);
            return std::string("?");
          }};
}

bool is_safe_name(const std::string& s) {
  return !s.empty() && s.size() <= 100 && s[0] != '.' && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

constexpr std::pair<const char*, StrategyKind> kStrategies[] = {
    {"fedavg", StrategyKind::FedAvg}, {"bsp", StrategyKind::Bsp},     {"bmuf", StrategyKind::Bmuf},
    {"diloco", StrategyKind::Diloco}, {"easgd", StrategyKind::Easgd}, {"hogwild", StrategyKind::Hogwild},
};

constexpr std::pair<const char*, WaitProfile> kWaitProfiles[] = {
    {"auto", WaitProfile::Auto}, {"plain", WaitProfile::Plain}, {"oversubscribed", WaitProfile::Oversubscribed}};

constexpr std::pair<const char*, Exchange> kExchanges[] = {
    {"auto", Exchange::Auto}, {"dense", Exchange::Dense}, {"sparse", Exchange::Sparse}};
constexpr std::pair<const char*, CheckpointBackground> kCheckpointBackground[] = {
    {"auto", CheckpointBackground::Auto},
    {"always", CheckpointBackground::Always},
    {"never", CheckpointBackground::Never}};
constexpr std::pair<const char*, ExchangeType> kExchangeTypes[] = {{"float32", ExchangeType::Float32},
                                                                   {"float16", ExchangeType::Float16},
                                                                   {"bfloat16", ExchangeType::BFloat16},
                                                                   {"int8", ExchangeType::Int8}};
constexpr std::pair<const char*, Combine> kCombines[] = {{"average", Combine::Average}, {"add", Combine::Add}};
constexpr std::pair<const char*, SparseWeighting> kWeightings[] = {{"windows", SparseWeighting::Windows},
                                                                   {"touched", SparseWeighting::Touched}};

// Every key, in the order --help lists them.
// NOLINTNEXTLINE(readability-function-size): the table of keys, one entry per key, read as one list.
const std::vector<Key>& keys() {
  static const std::vector<Key> table = [] {
    std::vector<Key> k;
    Key data_name{"data_name",
                  "text",
                  "run name: output files are NAME.h5, NAME_metrics.csv, ...",
                  [](const Value& x, Settings& s) {
                    if (!x.v.is_string()) x.must_be("a string");
                    s.data_name = x.v.get<std::string>();
                    if (!is_safe_name(s.data_name))
                      x.fail("\"data_name\" must be 1-100 letters, digits, '_', '-' or '.', got \"" + s.data_name +
                             "\"");
                  },
                  [](const Settings&) { return std::string("-"); },
                  true};
    k.push_back(data_name);
    k.push_back(integer("bpe", &Settings::bpe, 1, 1'000'000, "batches per learner per round"));
    k.back().required = true;
    k.back().show_default = [](const Settings&) { return std::string("-"); };
    k.push_back(integer("bs", &Settings::bs, 1, 1'000'000, "windows per batch"));
    k.back().required = true;
    k.back().show_default = [](const Settings&) { return std::string("-"); };
    k.push_back(
        number("target", &Settings::target, 0.0, 1e300, "stop once the test loss is at or below this (0: no target)"));
    k.back().required = true;
    k.back().show_default = [](const Settings&) { return std::string("-"); };
    k.push_back(number("max_epochs", &Settings::max_epochs, 0.0, 1e9,
                       "stop after this many passes over every corpus file (0: no limit)"));
    k.push_back(
        integer("max_rounds", &Settings::max_rounds, 0, 100'000'000, "stop after this many rounds (0: no limit)"));
    k.push_back(number("max_seconds", &Settings::max_seconds, 0.0, 1e9,
                       "stop after this much training time, in seconds (0: no limit)"));
    k.push_back(choice("strategy", &Settings::strategy, kStrategies,
                       "how the learners' models are combined (docs/strategies.md)"));
    k.push_back(integer("window", &Settings::window, 1, 50, "context words on each side of the target"));
    k.push_back(integer("dim", &Settings::dim, 1, 4096, "embedding dimension"));
    k.push_back(
        number("lr", &Settings::lr, 0.0, 1e3, "learning rate of the learners' model (absent: the model's own)", true));
    k.back().show_default = [](const Settings&) { return std::string("model's"); };
    Key seed{"seed", "integer 0..2^53", "same seed, same initial weights, drops and shuffles",
             [](const Value& x, Settings& s) {
               if (!x.v.is_number_integer()) x.must_be("an integer");
               const long long v = x.v.get<long long>();
               if (v < 0 || v > (1LL << 53)) x.fail("\"seed\" must be between 0 and 2^53, got " + std::to_string(v));
               s.seed = static_cast<std::uint64_t>(v);
             },
             [](const Settings& s) { return std::to_string(s.seed); }};
    k.push_back(seed);
    Key model{"model", "text", "model class in python/library.py",
              [](const Value& x, Settings& s) {
                if (!x.v.is_string()) x.must_be("a string");
                s.model = x.v.get<std::string>();
              },
              [](const Settings& s) { return s.model; }};
    k.push_back(model);
    Key model_args{"model_args", "JSON object", "model-specific settings, passed to library.py as they are",
                   [](const Value& x, Settings& s) {
                     if (!x.v.is_object()) x.must_be("a JSON object");
                     s.model_args = x.v;
                   },
                   [](const Settings&) { return std::string("{}"); }};
    k.push_back(model_args);
    k.push_back(number("sample", &Settings::sample, 0.0, 1.0,
                       "word2vec's subsampling threshold for frequent words (0: off; needs counts in vocab.txt)"));
    k.push_back(boolean("cross_lines", &Settings::cross_lines, "a window may span a line end"));
    k.push_back(boolean("cross_oov", &Settings::cross_oov,
                        "a window may span a word outside the vocabulary, which is dropped as word2vec and gensim "
                        "drop it (false: such a word ends the window's run)"));
    k.push_back(boolean("edge_windows", &Settings::edge_windows,
                        "every word of a line (of a run of two words or more) is a target, its window cut short at "
                        "the line's ends as gensim's (false: windows are whole, so a line's first and last window "
                        "words are context only); the neg model only"));
    k.push_back(boolean("reduced_windows", &Settings::reduced_windows,
                        "each target's context reaches a random 1 to window words on each side, drawn per target "
                        "(word2vec's and gensim's reduced window); implies edge_windows; the neg model only"));
    k.push_back(
        number("block_lr", &Settings::block_lr, 0.0, 100.0, "bmuf, diloco: step size of the outer update", true));
    k.push_back(
        number("block_momentum", &Settings::block_momentum, 0.0, 0.9999, "bmuf, diloco: momentum of the outer update"));
    k.push_back(boolean("nesterov", &Settings::nesterov, "bmuf: Nesterov outer momentum (diloco always uses it)"));
    k.push_back(number("elastic_alpha", &Settings::elastic_alpha, 0.0, 1.0, "easgd: moving rate (0: 0.9 / learners)"));
    k.push_back(choice("exchange", &Settings::exchange, kExchanges,
                       "fedavg, bsp, bmuf, diloco: send every weight, or only the rows that changed (auto: sparse "
                       "from 8M parameters on, when the learners span hosts)"));
    k.push_back(number("sparse_rows", &Settings::sparse_rows, 0.0, 1.0,
                       "sparse: the fraction of each table's rows a member sends a round, largest changes first "
                       "(1: every changed row; not given: 0.05 where hosts add their changes over fixed rounds, "
                       "else 1)",
                       true));
    k.push_back(choice("sparse_values", &Settings::sparse_values, kExchangeTypes,
                       "sparse: the values sent both ways (16-bit: half the bytes, int8: a quarter and a scale per "
                       "row; the rounding kept for later; not given: int8 where hosts add their changes over fixed "
                       "rounds, else float16)"));
    k.push_back(choice("sparse_weighting", &Settings::sparse_weighting, kWeightings,
                       "sparse: average a row over the learners that changed it (touched), or by each learner's "
                       "share of the windows as dense does (windows)"));
    k.push_back(integer("full_sync_every", &Settings::full_sync_every, 0, 100'000'000,
                        "sparse: every this many rounds, send every change and residual in float32 (0: never)"));
    k.push_back(integer("exchange_threads", &Settings::exchange_threads, 0, 1024,
                        "sparse: threads per rank for the exchange's work on rows (0: the cores of the rank's host "
                        "divided by the ranks of the exchange on it)"));
    k.push_back(boolean("balance_rounds", &Settings::balance_rounds,
                        "fedavg, bsp, bmuf, diloco: the first learner done ends the round"));
    k.push_back(boolean("share_host", &Settings::share_host,
                        "fedavg, bsp, bmuf, diloco: the learners of a host train one shared copy of the weights in "
                        "place, each batch in steps of bs / (its learners) windows, and one exchange per host "
                        "combines the hosts (false: a copy per learner, every learner in the exchange)"));
    k.push_back(choice("combine", &Settings::combine, kCombines,
                       "fedavg: the learners' changes are added (a row changed by k learners: at least their mean "
                       "change times k^add_power, their sum where the changes disagree), or averaged (not given: "
                       "added, but averaged across hosts with link-sized rounds, see exchange_share)"));
    k.push_back(number("add_power", &Settings::add_power, 0.0, 1.0,
                       "fedavg, combine add: a row changed by k learners moves by at least their mean change times "
                       "k^add_power (1: their sum)"));
    k.push_back(boolean("add_agreement", &Settings::add_agreement,
                        "fedavg, combine add: a row moves by up to the learners' summed change where the changes "
                        "disagree (|sum|^2 <= sum of squares), by less as they agree (false: k^add_power only)"));
    k.push_back(integer("add_bpe", &Settings::add_bpe, 0, 1'000'000,
                        "fedavg, combine add, several members: batches per member per round, which a host's "
                        "sharing learners divide among them (0: bpe; not given: 1, and where hosts of sharing "
                        "learners add their changes 8 per learner divided over the hosts)"));
    k.push_back(number("exchange_share", &Settings::exchange_share, 0.0, 0.9,
                       "across hosts whose learners share the weights: rounds grow from bpe (add_bpe with combine "
                       "add given) until the time that is not training (exchange, evaluation) is at most this share "
                       "of a round, and the hosts' changes are averaged unless combine is given (0: fixed rounds, "
                       "the hosts' changes added)"));
    k.push_back(boolean("overlap", &Settings::overlap,
                        "fedavg across hosts whose learners share the weights: a host's learners train on while its "
                        "leader exchanges (the sparse exchange on the shared weights in place, the dense one on a "
                        "copy whose change it then adds to them), sharing each round's batches (those trained "
                        "meanwhile are the next round's); absent: on where the hosts add their changes over fixed "
                        "rounds, unless fixed_batch_order is set, and off with link-sized rounds (exchange_share)"));
    k.push_back(boolean("fixed_batch_order", &Settings::fixed_batch_order,
                        "a Batcher serves its learners in a fixed rotation (reproducible runs; the default overlap "
                        "is then off)"));
    k.push_back(integer("shuffle_windows", &Settings::shuffle_windows, 0, 1 << 28,
                        "batches are drawn at random from this many windows (0: text order)"));
    k.push_back(integer("checkpoint_every", &Settings::checkpoint_every, 0, 100'000'000,
                        "a checkpoint every this many rounds (0: by time only)"));
    k.push_back(number("checkpoint_seconds", &Settings::checkpoint_seconds, 0.0, 1e9,
                       "a checkpoint at the end of the first round that begins this many training seconds after "
                       "the last one, or with sparse_rows below 1 20 times the extra exchange time of the last "
                       "checkpoint's round if longer (0: by rounds only; with both 0, only at the end)"));
    k.push_back(choice("checkpoint_background", &Settings::checkpoint_background, kCheckpointBackground,
                       "write checkpoints on a thread of their own while the rounds go on (auto: from 8M "
                       "parameters on)"));
    k.push_back(integer("eval_every", &Settings::eval_every, 0, 100'000'000,
                        "rounds between word-similarity/analogy scores (0: never)"));
    k.push_back(number("max_loss_ratio", &Settings::max_loss_ratio, 0.0, 1e12,
                       "a test loss above this times the untrained model's is an error (0: never)"));
    k.push_back(
        number("progress_seconds", &Settings::progress_seconds, 0.0, 1e6,
               "when stdout is not a terminal, at most one progress line per this many seconds (0: every round)"));
    k.push_back(number("liveness_seconds", &Settings::liveness_seconds, 0.1, 1e7,
                       "longest wait for any peer before the job fails naming it"));
    k.push_back(choice("wait_profile", &Settings::wait_profile, kWaitProfiles,
                       "how waiting ranks sleep (auto: oversubscribed when a node has more ranks than cores)"));
    k.push_back(integer("torch_threads", &Settings::torch_threads, 1, 1024, "torch and BLAS threads per learner"));
    Key device{"device", "auto, cpu, cuda or cuda:N",
               "where the learners and the Dispatcher run the model (auto: a GPU where torch sees one; hogwild: "
               "always the CPU)",
               [](const Value& x, Settings& s) {
                 if (!x.v.is_string()) x.must_be("\"auto\", \"cpu\", \"cuda\" or \"cuda:N\"");
                 const std::string d = x.v.get<std::string>();
                 const auto digit = [](unsigned char c) { return std::isdigit(c) != 0; };
                 const bool gpu_index = d.size() > 5 && d.compare(0, 5, "cuda:") == 0 &&
                                        std::all_of(d.begin() + 5, d.end(), digit);
                 if (d != "auto" && d != "cpu" && d != "cuda" && !gpu_index)
                   x.must_be("\"auto\", \"cpu\", \"cuda\" or \"cuda:N\"");
                 s.device = d;
               },
               [](const Settings& s) { return s.device; }};
    k.push_back(device);
    k.push_back(integer("slow_learners", &Settings::slow_learners, 0, 1'000'000,
                        "for studies: this many learners run slow_factor times slower"));
    k.push_back(number("slow_factor", &Settings::slow_factor, 1.0, 1000.0, "for studies: see slow_learners"));
    k.push_back(boolean("train", &Settings::train, "false: learners skip the model step (pipeline benchmarks)"));
    k.push_back(integer("text_block_bytes", &Settings::text_block_bytes, 1024, 1 << 28,
                        "text a Tokenizer reads at a time (whole lines)"));
    k.push_back(integer("window_block", &Settings::window_block, 1, 1 << 24, "windows per Filter -> Batcher message"));
    k.push_back(integer("credits", &Settings::credits, 1, 1024, "token blocks a Tokenizer may have in flight"));
    k.push_back(integer("pipelines", &Settings::pipelines, 0, 100'000,
                        "pipelines (Tokenizer, Filter, Batcher) of the job (0: one per corpus file)"));
    k.push_back(number("shard_mb", &Settings::shard_mb, 0.0, 1e7,
                       "cut the corpora into shards of about this many MiB, handed to the pipelines on demand, the "
                       "files read in step (0: about 1/32 of the smallest file, 16 KiB to 64 MiB; one corpus file "
                       "read by one pipeline is not cut)"));
    k.push_back(boolean("pipeline_per_file", &Settings::pipeline_per_file,
                        "each corpus file's pipeline reads it whole, again and again, with no shards (needs "
                        "pipelines 0 and shard_mb 0): reproducible with fixed_batch_order, but each file's passes "
                        "follow how many learners its pipeline feeds"));
    k.push_back(boolean("token_cache", &Settings::token_cache,
                        "the first pass writes the token ids to an on-disk cache; later passes and runs replay it "
                        "(false: tokenize every pass)"));
    Key cache_dir{"token_cache_dir", "text", "folder of the token caches (empty: OUT/cache)",
                  [](const Value& x, Settings& s) {
                    if (!x.v.is_string()) x.must_be("a string");
                    s.token_cache_dir = x.v.get<std::string>();
                  },
                  [](const Settings& s) {
                    return s.token_cache_dir.empty() ? std::string("OUT/cache") : s.token_cache_dir;
                  }};
    k.push_back(cache_dir);
    k.push_back(integer("prefetch_rounds", &Settings::prefetch_rounds, 1, 64,
                        "rounds of windows a Batcher keeps ready per learner"));
    Key max_line{"max_line_bytes", "integer 1024..2^40",
                 "a longer corpus line is read in pieces of at most this many bytes, each cut after a space or other "
                 "ASCII non-letter (no window spans a cut); a longer word is an error",
                 [](const Value& x, Settings& s) {
                   if (!x.v.is_number_integer()) x.must_be("an integer");
                   const long long v = x.v.get<long long>();
                   if (v < 1024 || v > (1LL << 40))
                     x.fail("\"max_line_bytes\" must be between 1024 and 2^40, got " + std::to_string(v));
                   s.max_line_bytes = v;
                 },
                 [](const Settings& s) { return std::to_string(s.max_line_bytes); }};
    k.push_back(max_line);
    return k;
  }();
  return table;
}

const Key* find_key(const std::string& name) {
  for (const auto& k : keys())
    if (k.name == name) return &k;
  return nullptr;
}

std::string known_keys() {
  std::vector<std::string> names;
  for (const auto& k : keys()) names.push_back(k.name);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A command-line value as JSON: what parses as JSON is taken as such, anything else as a string.
json override_value(const Override& o) {
  check_json_depth(o.value, "command line: " + o.flag, false);
  try {
    return json::parse(o.value);
  } catch (const json::parse_error&) {
    return json(o.value);
  }
}

// cfg.json's text as parsed, checked key by key, with the command line's overrides on top; it remembers where each
// value came from, for the errors that name it.
class SettingsParser {
 public:
  // Throws InputError unless `text` is a JSON object of known keys, each given once.
  SettingsParser(const std::string& text, const std::string& path) : text_(text), path_(path) {
    parse_json();
    check_keys();
  }

  const json& doc() const { return doc_; }

  void apply(const std::vector<Override>& overrides) {
    for (const auto& o : overrides) {
      if (o.key.rfind("model_args.", 0) == 0) {
        apply_model_arg(o);
        continue;
      }
      if (!find_key(o.key))
        throw InputError("command line: " + o.flag + ": unknown key \"" + o.key + "\" (known keys: " + known_keys() +
                         ")");
      doc_[o.key] = override_value(o);
      where_[o.key] = "command line: " + o.flag;
    }
  }

  // "--negative 10" (model_args.negatives): one key of model_args over the config's others.
  void apply_model_arg(const Override& o) {
    const std::string sub = o.key.substr(std::string("model_args.").size());
    if (sub.empty()) throw InputError("command line: " + o.flag + ": no model_args key after \"model_args.\"");
    json& args = doc_["model_args"];
    if (args.is_null()) args = json::object();
    if (!args.is_object())
      throw InputError("command line: " + o.flag + ": model_args (" + location("model_args") + ") is not an object");
    args[sub] = override_value(o);
    where_["model_args"] = "command line: " + o.flag;
  }

  // Reads every key given into Settings; records where each came from in `origins` (if any).
  Settings read(std::map<std::string, std::string>* origins) const {
    Settings s;
    for (const auto& k : keys()) {
      const auto it = doc_.find(k.name);
      if (it == doc_.end()) {
        if (k.required) throw InputError(path_ + ":1: missing required key \"" + k.name + "\"");
        continue;
      }
      const std::string at = location(k.name);
      k.read(Value{*it, k.name, at}, s);
      if (origins) (*origins)[k.name] = at;
    }
    return s;
  }

  // The checks that span keys.
  void check(const Settings& s) const {
    if (s.target <= 0 && s.max_rounds == 0 && s.max_seconds <= 0 && s.max_epochs <= 0)
      throw InputError(path_ + ":1: nothing would stop the run: set target, max_rounds, max_seconds or max_epochs");
  }

 private:
  void parse_json() {
    check_json_depth(text_, path_);
    try {
      doc_ = json::parse(text_, [this](int, json::parse_event_t event, json& parsed) { return note(event, parsed); });
    } catch (const json::parse_error& e) {
      // nlohmann's message reads "[json.exception.parse_error.101] parse error at line L, column C: ..."
      std::string what = e.what();
      const auto at = what.find("parse error");
      if (at != std::string::npos) what = what.substr(at);
      throw InputError(path_ + ":" + std::to_string(line_of_offset(text_, e.byte == 0 ? 0 : e.byte - 1)) +
                       ": not valid JSON: " + what);
    }
    if (!twice_.empty()) {
      const auto first = text_.find('"' + twice_ + '"');
      const auto second = text_.find('"' + twice_ + '"', first + 1);
      throw InputError(path_ + ":" + std::to_string(line_of_offset(text_, second)) + ": key \"" + twice_ +
                       "\" is given twice (first on line " + std::to_string(line_of_offset(text_, first)) + ")");
    }
  }

  // A key given twice in one object: JSON takes the last silently, which hides a mistake.
  bool note(json::parse_event_t event, const json& parsed) {
    if (event == json::parse_event_t::object_start) objects_.emplace_back();
    if (event == json::parse_event_t::object_end && !objects_.empty()) objects_.pop_back();
    if (event == json::parse_event_t::key && !objects_.empty() && twice_.empty() &&
        !objects_.back().insert(parsed.get<std::string>()).second)
      twice_ = parsed.get<std::string>();
    return true;
  }

  void check_keys() const {
    if (!doc_.is_object()) throw InputError(path_ + ":1: must hold a JSON object such as {\"bpe\": 10, ...}");
    for (const auto& [key, value] : doc_.items()) {
      (void)value;
      if (!find_key(key))
        throw InputError(path_ + ":" + std::to_string(line_of_key(text_, key)) + ": unknown key \"" + key +
                         "\" (known keys: " + known_keys() + ")");
    }
  }

  // Where `key`'s value came from: the command-line flag, else its line in cfg.json.
  std::string location(const std::string& key) const {
    const auto w = where_.find(key);
    return w != where_.end() ? w->second : path_ + ":" + std::to_string(line_of_key(text_, key));
  }

  const std::string& text_;
  const std::string& path_;
  json doc_;
  std::vector<std::set<std::string>> objects_;  // the keys of each object being parsed
  std::string twice_;                           // the first key given twice in one object
  std::map<std::string, std::string> where_;    // key -> the flag that overrode it
};

}  // namespace

const char* strategy_name(StrategyKind k) {
  for (const auto& [name, value] : kStrategies)
    if (value == k) return name;
  return "?";
}

bool is_settings_key(const std::string& key) { return find_key(key) != nullptr; }

std::vector<std::string> settings_keys() {
  std::vector<std::string> names;
  for (const auto& k : keys()) names.push_back(k.name);
  return names;
}

json Settings::to_json() const {
  json j{{"data_name", data_name},
         {"bpe", bpe},
         {"bs", bs},
         {"target", target},
         {"window", window},
         {"dim", dim},
         {"seed", seed},
         {"model", model},
         {"max_rounds", max_rounds},
         {"max_epochs", max_epochs},
         {"sample", sample},
         {"torch_threads", torch_threads},
         {"model_args", model_args},
         {"device", device}};
  if (lr > 0) j["lr"] = lr;
  return j;
}

Settings parse_settings(const std::string& text, const std::string& path, const std::vector<Override>& overrides,
                        json* merged, std::map<std::string, std::string>* origins) {
  SettingsParser parser(text, path);
  parser.apply(overrides);
  Settings s = parser.read(origins);
  parser.check(s);
  if (merged) *merged = parser.doc();
  return s;
}

Settings load_settings(const std::filesystem::path& path, const std::vector<Override>& overrides, json* merged,
                       std::map<std::string, std::string>* origins) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open cfg.json: " + std::strerror(errno));
  std::ostringstream os;
  os << in.rdbuf();
  return parse_settings(os.str(), path.string(), overrides, merged, origins);
}

std::string settings_help() {
  std::size_t name_width = 0, default_width = 0;
  const Settings defaults;
  for (const auto& k : keys()) {
    name_width = std::max(name_width, k.name.size());
    default_width = std::max(default_width, k.show_default(defaults).size());
  }
  std::ostringstream os;
  os << "  " << std::string("KEY") << std::string(name_width - 1, ' ') << "DEFAULT"
     << std::string(default_width > 5 ? default_width - 5 : 2, ' ') << "MEANING (TYPE)\n";
  for (const auto& k : keys()) {
    const std::string d = k.show_default(defaults);
    os << "  " << k.name << std::string(name_width - k.name.size() + 2, ' ') << d
       << std::string(default_width - d.size() + 2, ' ') << k.meaning << " (" << k.type
       << (k.required ? ", required" : "") << ")\n";
  }
  return os.str();
}

}  // namespace fedavg::core
