#include "core/command_line.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "core/paths.hpp"

namespace fedavg::core {
namespace {

// fastText's names for settings keys.
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> a = {{"epoch", "max_epochs"}, {"epochs", "max_epochs"},
                                                       {"ws", "window"}};
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

}  // namespace

std::string usage() {
  return "usage: mpiexec -n N fedavg_mpi [options] corpus1.txt [corpus2.txt ...]\n"
         "Each corpus file gets a pipeline (Tokenizer, Filter, Batcher); with --pipelines P (and --shard-mb M) the\n"
         "corpora are cut into shards of about M MiB that P pipelines share. N must be at least 4 * pipelines + 1,\n"
         "and the ranks left over are learners.\n"
         "\n"
         "options:\n"
         "  --config DIR   folder with vocab.txt, test.txt and cfg.json; without it the job prepares one from the\n"
         "                 corpora into OUT/config (vocabulary, counts, held-out test lines)\n"
         "  --out DIR      folder for weights, embeddings, metrics and statistics (default: ./trained)\n"
         "  --resume       continue the run whose checkpoint is in the --out folder\n"
         "  --overwrite    replace the run in the --out folder (it is kept until the new run's first checkpoint)\n"
         "  --set KEY=VALUE, --KEY VALUE\n"
         "                 override a cfg.json key (below); --epoch N is max_epochs, --ws N is window\n"
         "  --vocab-size N, --min-count N, --test-windows N, --stopwords\n"
         "                 how the job prepares its config when there is no --config (defaults 10000, 5, 1000)\n"
         "  --python DIR   folder with library.py, engine.py, textpipe.py, ... (default: " +
         default_python_dir().string() +
         ")\n"
         "  --restarted REASON  this launch takes up a job that failed for REASON (set by scripts/supervise.py;\n"
         "                 kept in the checkpoint, the metrics and the statistics)\n"
         "  --inject-fault RANK:ROUND:KIND  make RANK fail at ROUND (KIND: exception, kill, hang,\n"
         "                 kill_in_checkpoint); pipeline ranks count blocks instead of rounds. For tests.\n"
         "  --version      print the versions of fedavg_mpi, MPI, Python, torch and HDF5\n"
         "  --help         print this\n"
         "\n"
         "cfg.json keys (docs/running.md explains them):\n" +
         settings_help();
}

CommandLine parse_command_line(int argc, char** argv) {
  CommandLine c;
  c.python_dir = default_python_dir();
  bool prepare_options = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    // The flag's value: after '=' or the next argument.
    auto value = [&]() -> std::string {
      if (eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 >= argc) bad(name + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      c.help = true;
    } else if (a == "--version") {
      c.version = true;
    } else if (name == "--config") {
      c.config_dir = value();
    } else if (name == "--out") {
      c.out_dir = value();
    } else if (name == "--python") {
      c.python_dir = value();
    } else if (a == "--resume") {
      c.resume = true;
    } else if (a == "--overwrite") {
      c.overwrite = true;
    } else if (name == "--restarted") {
      c.restarted = value();
    } else if (name == "--inject-fault") {
      c.faults.push_back(parse_fault(value()));
    } else if (name == "--set") {
      const std::string kv = value();
      const auto at = kv.find('=');
      if (at == std::string::npos || at == 0) bad("--set " + kv + ": expected KEY=VALUE");
      c.overrides.push_back({kv.substr(0, at), kv.substr(at + 1), "--set " + kv});
    } else if (name == "--vocab-size") {
      c.prepare.vocab_size = positive_int(name, value());
      prepare_options = true;
    } else if (name == "--min-count") {
      c.prepare.min_count = positive_int(name, value());
      prepare_options = true;
    } else if (name == "--test-windows") {
      c.prepare.test_windows = positive_int(name, value());
      prepare_options = true;
    } else if (a == "--stopwords") {
      c.prepare.stopwords = true;
      prepare_options = true;
    } else if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string key = name.substr(2);
      std::replace(key.begin(), key.end(), '-', '_');
      if (const auto alias = aliases().find(key); alias != aliases().end()) key = alias->second;
      if (!is_settings_key(key)) bad("unknown option " + a);
      const std::string v = value();
      c.overrides.push_back({key, v, name + " " + v});
    } else if (a.size() > 1 && a[0] == '-') {
      bad("unknown option " + a);
    } else {
      c.corpora.push_back(a);
    }
  }
  if (c.help || c.version) return c;
  if (c.corpora.empty()) bad("no corpus file given");
  if (c.resume && c.overwrite) bad("--resume continues the run in the --out folder, --overwrite replaces it: not both");
  if (prepare_options && c.config_dir)
    bad("--vocab-size, --min-count, --test-windows and --stopwords only apply when the job prepares its config "
        "(no --config)");
  return c;
}

}  // namespace fedavg::core
