#include "core/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/paths.hpp"

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

class Reader {
 public:
  Reader(const std::string& text, const std::string& path, const json& doc) : text_(text), path_(path), doc_(doc) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(path_ + ":" + std::to_string(line_of_key(text_, key)) + ": " + what);
  }

  const json* find(const std::string& key, bool required) const {
    const auto it = doc_.find(key);
    if (it == doc_.end()) {
      if (required) throw InputError(path_ + ":1: missing required key \"" + key + "\"");
      return nullptr;
    }
    return &*it;
  }

  void integer(const std::string& key, int& out, long long lo, long long hi, bool required = false) const {
    long long v = out;
    integer64(key, v, lo, hi, required);
    out = static_cast<int>(v);
  }

  void integer64(const std::string& key, long long& out, long long lo, long long hi, bool required = false) const {
    const json* v = find(key, required);
    if (!v) return;
    if (!v->is_number_integer()) fail(key, "\"" + key + "\" must be an integer, got " + v->dump());
    const long long x = v->get<long long>();
    if (x < lo || x > hi)
      fail(key, "\"" + key + "\" must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                    std::to_string(x));
    out = x;
  }

  void number(const std::string& key, double& out, double lo, double hi, bool required = false) const {
    const json* v = find(key, required);
    if (!v) return;
    if (!v->is_number()) fail(key, "\"" + key + "\" must be a number, got " + v->dump());
    const double x = v->get<double>();
    if (!(x >= lo && x <= hi)) {
      std::ostringstream os;
      os << "\"" << key << "\" must be between " << lo << " and " << hi << ", got " << x;
      fail(key, os.str());
    }
    out = x;
  }

  void boolean(const std::string& key, bool& out) const {
    const json* v = find(key, false);
    if (!v) return;
    if (!v->is_boolean()) fail(key, "\"" + key + "\" must be true or false, got " + v->dump());
    out = v->get<bool>();
  }

  void string(const std::string& key, std::string& out, bool required = false) const {
    const json* v = find(key, required);
    if (!v) return;
    if (!v->is_string()) fail(key, "\"" + key + "\" must be a string, got " + v->dump());
    out = v->get<std::string>();
  }

 private:
  const std::string& text_;
  const std::string& path_;
  const json& doc_;
};

constexpr std::pair<const char*, StrategyKind> kStrategies[] = {
    {"fedavg", StrategyKind::FedAvg}, {"bsp", StrategyKind::Bsp},         {"bmuf", StrategyKind::Bmuf},
    {"easgd", StrategyKind::Easgd},   {"hogwild", StrategyKind::Hogwild},
};

constexpr std::pair<const char*, WaitProfile> kWaitProfiles[] = {
    {"auto", WaitProfile::Auto}, {"plain", WaitProfile::Plain}, {"oversubscribed", WaitProfile::Oversubscribed}};

// Reads a string key that must be one of `table`'s names.
template <typename E, std::size_t N>
void one_of(const Reader& r, const std::string& key, const std::pair<const char*, E> (&table)[N], E& out) {
  if (!r.find(key, false)) return;
  std::string name;
  r.string(key, name);
  std::string names;
  for (const auto& [n, value] : table) {
    if (name == n) {
      out = value;
      return;
    }
    names += (names.empty() ? "" : ", ") + std::string(n);
  }
  r.fail(key, "\"" + key + "\" must be one of " + names + ", got \"" + name + "\"");
}

bool is_safe_name(const std::string& s) {
  return !s.empty() && s.size() <= 100 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  }) && s[0] != '.';
}

}  // namespace

const char* strategy_name(StrategyKind k) {
  for (const auto& [name, value] : kStrategies)
    if (value == k) return name;
  return "?";
}

json Settings::to_json() const {
  json j{{"data_name", data_name}, {"bpe", bpe},       {"bs", bs},
         {"target", target},       {"window", window}, {"dim", dim},
         {"seed", seed},           {"model", model},   {"max_rounds", max_rounds},
         {"torch_threads", torch_threads},             {"model_args", model_args}};
  if (lr > 0) j["lr"] = lr;
  return j;
}

Settings parse_settings(const std::string& text, const std::string& path) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line L, column C: ..."
    std::string what = e.what();
    const auto colon = what.find("parse error");
    if (colon != std::string::npos) what = what.substr(colon);
    throw InputError(path + ":" + std::to_string(line_of_offset(text, e.byte == 0 ? 0 : e.byte - 1)) +
                     ": not valid JSON: " + what);
  }
  if (!doc.is_object()) throw InputError(path + ":1: must hold a JSON object such as {\"bpe\": 10, ...}");

  Settings s;
  const Reader r(text, path, doc);
  const std::map<std::string, std::function<void()>> keys = {
      {"data_name",
       [&] {
         r.string("data_name", s.data_name, true);
         if (!is_safe_name(s.data_name))
           r.fail("data_name", "\"data_name\" must be 1-100 letters, digits, '_', '-' or '.', got \"" + s.data_name +
                                   "\"");
       }},
      {"bpe", [&] { r.integer("bpe", s.bpe, 1, 1'000'000, true); }},
      {"bs", [&] { r.integer("bs", s.bs, 1, 1'000'000, true); }},
      {"target", [&] { r.number("target", s.target, -1e300, 1e300, true); }},
      {"window", [&] { r.integer("window", s.window, 1, 50); }},
      {"dim", [&] { r.integer("dim", s.dim, 1, 4096); }},
      {"lr", [&] { r.number("lr", s.lr, 1e-12, 1e3); }},  // absent: the model's default
      {"seed",
       [&] {
         long long v = 1;
         r.integer64("seed", v, 0, (1LL << 53));
         s.seed = static_cast<std::uint64_t>(v);
       }},
      {"max_rounds", [&] { r.integer("max_rounds", s.max_rounds, 1, 100'000'000); }},
      {"max_seconds", [&] { r.number("max_seconds", s.max_seconds, 1e-3, 1e9); }},
      {"model", [&] { r.string("model", s.model); }},
      {"cross_lines", [&] { r.boolean("cross_lines", s.cross_lines); }},
      {"cross_oov", [&] { r.boolean("cross_oov", s.cross_oov); }},
      {"sample", [&] { r.number("sample", s.sample, 0.0, 1.0); }},
      {"train", [&] { r.boolean("train", s.train); }},
      {"strategy", [&] { one_of(r, "strategy", kStrategies, s.strategy); }},
      {"block_lr", [&] { r.number("block_lr", s.block_lr, 0.0, 100.0); }},
      {"block_momentum", [&] { r.number("block_momentum", s.block_momentum, 0.0, 0.9999); }},
      {"nesterov", [&] { r.boolean("nesterov", s.nesterov); }},
      {"elastic_alpha", [&] { r.number("elastic_alpha", s.elastic_alpha, 1e-6, 1.0); }},
      {"slow_learners", [&] { r.integer("slow_learners", s.slow_learners, 0, 1'000'000); }},
      {"slow_factor", [&] { r.number("slow_factor", s.slow_factor, 1.0, 1000.0); }},
      {"fixed_batch_order", [&] { r.boolean("fixed_batch_order", s.fixed_batch_order); }},
      {"balance_rounds", [&] { r.boolean("balance_rounds", s.balance_rounds); }},
      {"liveness_seconds", [&] { r.number("liveness_seconds", s.liveness_seconds, 0.1, 1e7); }},
      {"wait_profile", [&] { one_of(r, "wait_profile", kWaitProfiles, s.wait_profile); }},
      {"torch_threads", [&] { r.integer("torch_threads", s.torch_threads, 1, 1024); }},
      {"text_block_bytes", [&] { r.integer("text_block_bytes", s.text_block_bytes, 1024, 1 << 28); }},
      {"window_block", [&] { r.integer("window_block", s.window_block, 1, 1 << 24); }},
      {"credits", [&] { r.integer("credits", s.credits, 1, 1024); }},
      {"token_cache_mb", [&] { r.integer("token_cache_mb", s.token_cache_mb, 0, 1 << 20); }},
      {"prefetch_rounds", [&] { r.integer("prefetch_rounds", s.prefetch_rounds, 1, 64); }},
      {"shuffle_windows", [&] { r.integer("shuffle_windows", s.shuffle_windows, 0, 1 << 28); }},
      {"checkpoint_every", [&] { r.integer("checkpoint_every", s.checkpoint_every, 1, 100'000'000); }},
      {"eval_every", [&] { r.integer("eval_every", s.eval_every, 0, 100'000'000); }},
      {"max_loss_ratio", [&] { r.number("max_loss_ratio", s.max_loss_ratio, 0.0, 1e12); }},
      {"max_line_bytes",
       [&] {
         long long v = s.max_line_bytes;
         r.integer64("max_line_bytes", v, 1024, 1LL << 40);
         s.max_line_bytes = v;
       }},
      {"model_args",
       [&] {
         const json* v = r.find("model_args", false);
         if (!v) return;
         if (!v->is_object()) r.fail("model_args", "\"model_args\" must be a JSON object, got " + v->dump());
         s.model_args = *v;
       }},
  };
  for (const auto& [key, value] : doc.items()) {
    (void)value;
    if (keys.count(key) == 0) {
      std::string known;
      for (const auto& k : keys) known += (known.empty() ? "" : ", ") + k.first;
      r.fail(key, "unknown key \"" + key + "\" (known keys: " + known + ")");
    }
  }
  for (const auto& k : keys) k.second();
  return s;
}

Settings load_settings(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open cfg.json: " + std::strerror(errno));
  std::ostringstream os;
  os << in.rdbuf();
  return parse_settings(os.str(), path.string());
}

std::string usage() {
  return "usage: mpiexec -n N fedavg_mpi [--config DIR] [--out DIR] [--python DIR] corpus1.txt [corpus2.txt ...]\n"
         "  --config DIR  folder with vocab.txt, test.txt and cfg.json (default: " +
         default_config_dir().string() +
         ")\n"
         "  --out DIR     folder for weights, embeddings, metrics and statistics (default: ./trained)\n"
         "  --python DIR  folder with library.py, engine.py, textpipe.py, ... (default: " +
         default_python_dir().string() +
         ")\n"
         "  --resume      continue the run whose checkpoint is in the --out folder\n"
         "  --inject-fault RANK:ROUND:KIND  make RANK fail at ROUND (KIND: exception, kill, hang,\n"
         "                kill_in_checkpoint); pipeline ranks count blocks instead of rounds. For tests.\n"
         "Each corpus file gets a Tokenizer, Filter and Batcher; N must be at least 4 * files + 1.\n";
}

Config load_config(int argc, char** argv) {
  Config c;
  c.config_dir = default_config_dir();
  c.out_dir = "trained";
  c.python_dir = default_python_dir();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const std::string& flag) -> std::string {
      const auto eq = a.find('=');
      if (eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 >= argc) throw InputError("command line: " + flag + " needs a value\n" + usage());
      return argv[++i];
    };
    auto is = [&](const char* flag) { return a == flag || a.rfind(std::string(flag) + "=", 0) == 0; };
    if (a == "-h" || a == "--help") {
      c.show_help = true;
    } else if (is("--config")) {
      c.config_dir = value("--config");
    } else if (is("--out")) {
      c.out_dir = value("--out");
    } else if (is("--python")) {
      c.python_dir = value("--python");
    } else if (a == "--resume") {
      c.resume = true;
    } else if (is("--inject-fault")) {
      c.faults.push_back(parse_fault(value("--inject-fault")));
    } else if (a.size() > 1 && a[0] == '-') {
      throw InputError("command line: unknown option " + a + "\n" + usage());
    } else {
      c.corpora.push_back(a);
    }
  }
  if (c.show_help) return c;
  if (c.corpora.empty()) throw InputError("command line: no corpus file given\n" + usage());
  c.settings = load_settings(c.cfg_path());
  return c;
}

}  // namespace fedavg::core
