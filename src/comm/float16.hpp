// 16-bit floats for compressed weight exchange: IEEE half (float16) and bfloat16, converted with round-to-nearest-
// even. float16 keeps 11 significant bits in a narrow range (overflow becomes infinity); bfloat16 keeps float32's
// range with 8 significant bits.
#pragma once

#include <cstdint>

namespace fedavg::comm {

std::uint16_t to_float16(float f);
float from_float16(std::uint16_t h);
std::uint16_t to_bfloat16(float f);
float from_bfloat16(std::uint16_t b);

}  // namespace fedavg::comm
