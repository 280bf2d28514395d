// A bound on how deeply a JSON text nests, checked before it is parsed: a deeper document would exhaust the stack
// of the parser's callers and of the recursive destructor of the value it builds, on every rank at once.
#pragma once

#include <string>

namespace fedavg::core {

// Objects and arrays inside one another deeper than this are refused.
inline constexpr int kMaxJsonDepth = 64;

// Throws InputError "<where>:<line>: nested deeper than 64 objects or arrays" for a text that does; `where` names
// the file (the line is counted from the text) or, with `line_numbers` false, the command-line flag.
void check_json_depth(const std::string& text, const std::string& where, bool line_numbers = true);

}  // namespace fedavg::core
