// Typed call into python/prepare.py for a job started without --config: writes the config folder (vocab.txt
// with counts, test.txt, heldout.json, cfg.json) from the corpora. Imports no torch.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fedavg::bridge {

class Interpreter;

class Prepare {
 public:
  explicit Prepare(Interpreter& py);

  // Writes the config for `corpora` into `out`; `options` holds prepare.prepare_job's options. Returns its
  // summary lines. A problem with the corpora throws core::InputError.
  std::string run(const std::vector<std::string>& corpora, const std::filesystem::path& out,
                  const nlohmann::json& options);
};

}  // namespace fedavg::bridge
