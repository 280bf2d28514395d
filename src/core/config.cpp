#include "core/config.hpp"

#include <algorithm>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

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
  const double mb = settings.shard_mb > 0 ? settings.shard_mb : kDefaultShardMb;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(mb * 1048576.0));
}

std::string Config::where(const std::string& key) const {
  const auto it = origins.find(key);
  return it != origins.end() ? it->second : cfg_path().string();
}

int pipelines_hint(const CommandLine& line) {
  int pipelines = 0;
  try {
    const auto dir = line.config_dir ? *line.config_dir
                                     : (line.resume ? line.out_dir / "config" : std::filesystem::path());
    if (!dir.empty() && std::filesystem::exists(dir / "cfg.json")) {
      std::ifstream in(dir / "cfg.json");
      std::ostringstream os;
      os << in.rdbuf();
      const auto doc = nlohmann::json::parse(os.str());
      if (doc.contains("pipelines") && doc["pipelines"].is_number_integer()) pipelines = doc["pipelines"].get<int>();
    }
    for (const auto& o : line.overrides)
      if (o.key == "pipelines") pipelines = std::stoi(o.value);
  } catch (const std::exception&) {
    // A bad value is reported, with its place, when the settings are loaded.
  }
  return pipelines > 0 ? pipelines : static_cast<int>(line.corpora.size());
}

void check_pipelines(const Config& cfg, int pipelines) {
  if (cfg.pipelines() != pipelines)
    throw InputError(cfg.cfg_path().string() + ": \"pipelines\" gives " + std::to_string(cfg.pipelines()) +
                     " pipelines, but the ranks were laid out for " + std::to_string(pipelines) +
                     "; give --pipelines on the command line");
}

int torch_threads_hint(const CommandLine& line) {
  int threads = Settings{}.torch_threads;
  try {
    if (line.config_dir) {
      std::ifstream in(*line.config_dir / "cfg.json");
      std::ostringstream os;
      os << in.rdbuf();
      const auto doc = nlohmann::json::parse(os.str());
      if (doc.contains("torch_threads") && doc["torch_threads"].is_number_integer())
        threads = doc["torch_threads"].get<int>();
    }
    for (const auto& o : line.overrides)
      if (o.key == "torch_threads") threads = std::stoi(o.value);
  } catch (const std::exception&) {
    // A bad value is reported, with its place, when the settings are loaded.
  }
  return threads >= 1 && threads <= 1024 ? threads : Settings{}.torch_threads;
}

}  // namespace fedavg::core
