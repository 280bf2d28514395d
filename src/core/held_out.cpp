#include "core/held_out.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_depth.hpp"

namespace fedavg::core {

HeldOut held_out_lines(const std::filesystem::path& path, const std::vector<std::string>& corpora, std::size_t index) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  const std::string file = path.string();
  const std::string redo = ": prepare the config again, or delete " + file + " to train on every line";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  nlohmann::json doc;
  check_json_depth(os.str(), file);
  try {
    doc = nlohmann::json::parse(os.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file + ": not valid JSON: " + e.what());
  }
  const auto& list = doc.contains("corpora") ? doc["corpora"] : nlohmann::json();
  if (!list.is_array()) throw InputError(file + ": must hold {\"corpora\": [...]}" + redo);
  if (list.size() != corpora.size())
    throw InputError(file + ": written for " + std::to_string(list.size()) +
                     " corpus file(s), the command line names " + std::to_string(corpora.size()) + redo);
  const auto& entry = list[index];
  const auto bytes = std::filesystem::file_size(corpora[index], ec);
  if (!ec && entry.value("bytes", std::int64_t{-1}) != static_cast<std::int64_t>(bytes))
    throw InputError(file + ": corpus " + corpora[index] + " held " + std::to_string(entry.value("bytes", -1)) +
                     " bytes when its test lines were held out, it now holds " + std::to_string(bytes) + redo);
  std::vector<std::int64_t> offsets;
  try {
    offsets = entry.at("offsets").get<std::vector<std::int64_t>>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(file + ": corpus " + std::to_string(index + 1) + " has no list of offsets" + redo);
  }
  std::sort(offsets.begin(), offsets.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  try {
    if (entry.contains("spans")) spans = entry.at("spans").get<std::vector<std::pair<std::int64_t, std::int64_t>>>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(file + ": corpus " + std::to_string(index + 1) + ": \"spans\" must be [begin, end] pairs" + redo);
  }
  for (const auto& [begin, end] : spans)
    if (begin < 0 || end < begin || (!ec && end > static_cast<std::int64_t>(bytes)))
      throw InputError(file + ": corpus " + std::to_string(index + 1) + ": span [" + std::to_string(begin) + ", " +
                       std::to_string(end) + "] lies outside the file" + redo);
  std::sort(spans.begin(), spans.end());
  return {std::move(offsets), std::move(spans)};
}

}  // namespace fedavg::core
