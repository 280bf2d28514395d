// 16-bit floats for compressed weight exchange: IEEE half (float16) and bfloat16, converted with round-to-nearest-
// even. float16 keeps 11 significant bits in a narrow range (overflow becomes infinity); bfloat16 keeps float32's
// range with 8 significant bits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fedavg::comm {

std::uint16_t to_float16(float f);
float from_float16(std::uint16_t h);
// The same for n values at once (with the CPU's F16C instructions where it has them: same results).
void to_float16(const float* in, std::uint16_t* out, std::size_t n);
void from_float16(const std::uint16_t* in, float* out, std::size_t n);
// Rounds n values to float16 and back, in place.
void round_to_float16(float* v, std::size_t n);
std::uint16_t to_bfloat16(float f);
float from_bfloat16(std::uint16_t b);

}  // namespace fedavg::comm
