// The tests' reference for the sparse exchange's encoding (src/training/exchange/sparse_delta.hpp): a plain decoder of
// the bytes SparseDelta::encode writes, written apart from the one-pass decoders the exchange uses (merge_encoded,
// add_encoded), a rounding of a whole delta, and an encode into a new buffer.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

#include "comm/float16.hpp"
#include "training/exchange/sparse_delta.hpp"

namespace fedavg::sparse_reference {

using training::Layout;
using training::SparseDelta;
using training::ValueType;

// `d` encoded into a new buffer after `front` zero bytes.
inline std::vector<std::uint8_t> encode(const SparseDelta& d, const Layout& layout, ValueType type,
                                        std::size_t front = 0) {
  std::vector<std::uint8_t> out(front, 0);
  d.encode(out, layout, type, front);
  return out;
}

// Every row of `d` rounded to `type` and back (what the other side decodes).
inline SparseDelta rounded(SparseDelta d, ValueType type) {
  for (auto& p : d.parts) {
    if (p.rows.empty()) continue;
    const std::size_t cols = p.values.size() / p.rows.size();
    for (std::size_t k = 0; k < p.rows.size(); ++k) training::round_values(p.values.data() + k * cols, cols, type);
  }
  return d;
}

// One row of `cols` int8 values: a float32 scale, then a signed byte per value, each value the byte times the scale.
inline void decode_int8_row(const std::function<void(void*, std::size_t)>& get, float* out, std::size_t cols) {
  float scale = 0.0f;
  get(&scale, 4);
  for (std::size_t c = 0; c < cols; ++c) {
    std::int8_t q = 0;
    get(&q, 1);
    out[c] = static_cast<float>(q) * scale;
  }
}

// The delta encoded in bytes [skip, end): a flags word (1: per-row weights follow), each table's row count, then
// per table its rows, values (int8: row by row) and (if flagged) weights. Trusts the bytes but for their length (a
// reference for well-formed payloads, not a checker).
inline SparseDelta decode(const std::vector<std::uint8_t>& bytes, const Layout& layout, ValueType type,
                          std::size_t skip = 0) {
  std::size_t at = skip;
  const auto get = [&](void* to, std::size_t n) {
    if (at + n > bytes.size()) throw std::runtime_error("reference decode: payload ends early");
    if (n > 0) std::memcpy(to, bytes.data() + at, n);
    at += n;
  };
  std::uint32_t flags = 0;
  get(&flags, 4);
  std::vector<std::uint32_t> counts(layout.size());
  for (auto& n : counts) get(&n, 4);
  SparseDelta d(layout.size());
  for (std::size_t t = 0; t < layout.size(); ++t) {
    SparseDelta::Part& p = d.parts[t];
    p.rows.resize(counts[t]);
    get(p.rows.data(), p.rows.size() * 4);
    const std::size_t cols = layout[t].cols;
    p.values.resize(p.rows.size() * cols);
    for (std::size_t k = 0; k < p.rows.size(); ++k) {
      float* row = p.values.data() + k * cols;
      if (type == ValueType::Int8) {
        decode_int8_row(get, row, cols);
        continue;
      }
      for (std::size_t c = 0; c < cols; ++c) {
        if (type == ValueType::Float32) {
          get(row + c, 4);
          continue;
        }
        std::uint16_t h = 0;
        get(&h, 2);
        row[c] = type == ValueType::Float16 ? comm::from_float16(h) : comm::from_bfloat16(h);
      }
    }
    if (flags & 1) {
      p.weights.resize(p.rows.size());
      get(p.weights.data(), p.weights.size() * 4);
    }
  }
  if (at != bytes.size()) throw std::runtime_error("reference decode: bytes after the rows");
  return d;
}

}  // namespace fedavg::sparse_reference
