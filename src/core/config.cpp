#include "core/config.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

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
      faults(line.faults) {}

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
