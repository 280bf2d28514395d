// The tests' reference for the sparse exchange's encoding (src/training/exchange/sparse_delta.hpp): a plain decoder of
// the bytes SparseDelta::encode writes, written apart from the one-pass decoders the exchange uses (merge_encoded,
// add_encoded), a rounding of a whole delta, and an encode into a new buffer.
#pragma once

#include <cstdint>
#include <cstring>
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

// Every value of `d` rounded to `type` and back (what the other side decodes).
inline SparseDelta rounded(SparseDelta d, ValueType type) {
  for (auto& p : d.parts) training::round_values(p.values.data(), p.values.size(), type);
  return d;
}

// The delta encoded in bytes [skip, end): a flags word (1: per-row weights follow), each table's row count, then
// per table its rows, values and (if flagged) weights. Trusts the bytes but for their length (a reference for
// well-formed payloads, not a checker).
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
    p.values.resize(p.rows.size() * layout[t].cols);
    for (float& v : p.values) {
      if (type == ValueType::Float32) {
        get(&v, 4);
        continue;
      }
      std::uint16_t h = 0;
      get(&h, 2);
      v = type == ValueType::Float16 ? comm::from_float16(h) : comm::from_bfloat16(h);
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
