#include "core/json_depth.hpp"

#include "core/error.hpp"

namespace fedavg::core {

void check_json_depth(const std::string& text, const std::string& where, bool line_numbers) {
  int depth = 0;
  int line = 1;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      escaped = !escaped && c == '\\';
      if (c == '"' && !escaped) in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (depth > kMaxJsonDepth)
      throw InputError(where + (line_numbers ? ":" + std::to_string(line) : std::string()) + ": nested deeper than " +
                       std::to_string(kMaxJsonDepth) + " objects or arrays");
  }
}

}  // namespace fedavg::core
