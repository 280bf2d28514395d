#include "core/config.hpp"

#include <algorithm>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_depth.hpp"

namespace fedavg::core {

Config::Config(const CommandLine& line)
    : config_dir(line.config_dir ? *line.config_dir : line.out_dir / "config"),
      out_dir(line.out_dir),
      python_dir(line.python_dir),
      corpora(line.corpora),
      prepared(!line.config_dir),
      resume(line.resume),
      overwrite(line.overwrite),
      restarted(line.restarted),
      init_from(line.init_from),
      faults(line.faults) {}

std::int64_t Config::shard_bytes() const {
  if (settings.shard_mb <= 0) return 0;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(settings.shard_mb * 1048576.0));
}

std::string Config::where(const std::string& key) const {
  const auto it = origins.find(key);
  return it != origins.end() ? it->second : cfg_path().string();
}

namespace {

// The value of `key` that the command line, or else the cfg.json the job will read (--config's, or with --resume
// the one the job prepared in OUT/config), gives before the settings are loaded; null if neither does or it cannot
// be read (the loading of the settings reports that, with its place).
nlohmann::json setting_hint(const CommandLine& line, const std::string& key) {
  nlohmann::json value;
  try {
    const auto dir = line.config_dir ? *line.config_dir
                                     : (line.resume ? line.out_dir / "config" : std::filesystem::path());
    if (!dir.empty() && std::filesystem::exists(dir / "cfg.json")) {
      std::ifstream in(dir / "cfg.json");
      std::ostringstream os;
      os << in.rdbuf();
      check_json_depth(os.str(), (dir / "cfg.json").string());
      const auto doc = nlohmann::json::parse(os.str());
      if (doc.is_object() && doc.contains(key)) value = doc[key];
    }
    for (const auto& o : line.overrides) {
      if (o.key != key) continue;
      check_json_depth(o.value, o.flag, false);
      value = nlohmann::json::parse(o.value, nullptr, false);
      if (value.is_discarded()) value = o.value;
    }
  } catch (const std::exception&) {
    value = nullptr;
  }
  return value;
}

}  // namespace

int pipelines_hint(const CommandLine& line) {
  const auto v = setting_hint(line, "pipelines");
  const int pipelines = v.is_number_integer() ? v.get<int>() : 0;
  return pipelines > 0 ? pipelines : static_cast<int>(line.corpora.size());
}

double liveness_hint(const CommandLine& line) {
  const auto v = setting_hint(line, "liveness_seconds");
  return v.is_number() && v.get<double>() > 0 ? v.get<double>() : Settings{}.liveness_seconds;
}

void check_pipelines(const Config& cfg, int pipelines) {
  if (cfg.pipelines() != pipelines)
    throw InputError(cfg.cfg_path().string() + ": \"pipelines\" gives " + std::to_string(cfg.pipelines()) +
                     " pipelines, but the ranks were laid out for " + std::to_string(pipelines) +
                     "; give --pipelines on the command line");
  const auto& s = cfg.settings;
  if (s.pipeline_per_file && (s.shard_mb > 0 || cfg.pipelines() != static_cast<int>(cfg.corpora.size())))
    throw InputError(
        cfg.where("pipeline_per_file") + ": pipeline_per_file gives each of the " + std::to_string(cfg.corpora.size()) +
        " corpus file(s) a pipeline of its own, but " +
        (s.shard_mb > 0 ? "shard_mb cuts them into shards" : "pipelines asks for " + std::to_string(s.pipelines)) +
        "; set one or the other");
}

int torch_threads_hint(const CommandLine& line) {
  const auto v = setting_hint(line, "torch_threads");
  const int threads = v.is_number_integer() ? v.get<int>() : Settings{}.torch_threads;
  return threads >= 1 && threads <= 1024 ? threads : Settings{}.torch_threads;
}

}  // namespace fedavg::core
