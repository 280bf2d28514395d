// Marker values inside a token stream (vocabulary ids are >= 0). The one place they are defined.
#pragma once

#include <cstdint>

namespace fedavg::data {

inline constexpr std::int32_t kBreak = -1;    // end of a line (textpipe.BREAK)
inline constexpr std::int32_t kOov = -2;      // a word that is not in the vocabulary (textpipe.OOV)
inline constexpr std::int32_t kEof = -3;      // end of the corpus file; windows never span it
inline constexpr std::int32_t kDropped = -4;  // a word removed by subsampling (inside the Filter only)

}  // namespace fedavg::data
