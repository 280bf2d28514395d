// UTF-8 validation for corpus text (the tokenizer decodes invalid sequences as U+FFFD, a non-letter).
#pragma once

#include <cstddef>
#include <string_view>

namespace fedavg::data {

// Offset of the first byte that does not start or continue a valid UTF-8 sequence, or npos if all is valid.
// A sequence cut off by the end of `text` counts as invalid.
std::size_t first_invalid_utf8(std::string_view text);

}  // namespace fedavg::data
