#include "training/sparse_delta.hpp"

#include <algorithm>
#include <cstring>

#include "comm/error.hpp"
#include "comm/float16.hpp"

namespace fedavg::training {
namespace {

constexpr std::uint32_t kWeights = 1;  // header flag: per-row weights follow the values

std::size_t value_bytes(ValueType t) { return t == ValueType::Float32 ? 4 : 2; }

class Reader {
 public:
  Reader(const std::vector<std::uint8_t>& b, std::size_t at) : b_(b), at_(at) {}
  // The next n bytes, in place.
  const std::uint8_t* take(std::size_t n) {
    if (at_ + n > b_.size())
      throw comm::Error("sparse weights: payload of " + std::to_string(b_.size()) + " bytes ends early");
    at_ += n;
    return b_.data() + at_ - n;
  }
  void get(void* p, std::size_t n) {
    if (n > 0) std::memcpy(p, take(n), n);
  }
  bool done() const { return at_ == b_.size(); }

 private:
  const std::vector<std::uint8_t>& b_;
  std::size_t at_;
};

// a += b for one table: merged from the back, in place, so a's vectors only grow.
void add_part(SparseDelta::Part& a, const SparseDelta::Part& b, std::size_t cols) {
  if (b.rows.empty()) return;
  const bool weighted = !a.weights.empty() || !b.weights.empty();
  const std::size_t na = a.rows.size(), nb = b.rows.size();
  if (weighted) a.weights.resize(na, 0.0f);  // a row without a weight has weight 0
  std::size_t n = 0;
  for (std::size_t i = 0, j = 0; i < na || j < nb; ++n) {
    if (j == nb || (i < na && a.rows[i] < b.rows[j])) {
      ++i;
    } else {
      if (i < na && a.rows[i] == b.rows[j]) ++i;
      ++j;
    }
  }
  // A vector that must grow takes what the sum holds, or half again its capacity if that is more: a large merge
  // (a full round) allocates what it fills, not up to twice as much, and slow growth from round to round still
  // reallocates rarely.
  const auto grow = [](auto& v, std::size_t size) {
    if (size > v.capacity()) v.reserve(std::max(size, v.capacity() + v.capacity() / 2));
    v.resize(size);
  };
  grow(a.rows, n);
  grow(a.values, n * cols);
  if (weighted) grow(a.weights, n);
  // k >= i throughout (b's rows not placed yet are still to come): a row of a moves only to the right.
  std::size_t i = na, j = nb, k = n;
  while (j > 0) {
    --k;
    const bool from_a = i > 0 && a.rows[i - 1] >= b.rows[j - 1];
    const bool both = from_a && a.rows[i - 1] == b.rows[j - 1];
    float* to = a.values.data() + k * cols;
    if (from_a) {
      --i;
      a.rows[k] = a.rows[i];
      if (k != i) std::memcpy(to, a.values.data() + i * cols, cols * sizeof(float));
      if (weighted) a.weights[k] = a.weights[i];
    }
    if (!from_a || both) {
      --j;
      const float* v = b.values.data() + j * cols;
      if (both) {
        for (std::size_t c = 0; c < cols; ++c) to[c] += v[c];
      } else {
        a.rows[k] = b.rows[j];
        std::memcpy(to, v, cols * sizeof(float));
      }
      if (weighted) {
        const float w = b.weights.empty() ? 0.0f : b.weights[j];
        a.weights[k] = both ? a.weights[k] + w : w;
      }
    }
  }
}

}  // namespace

void round_values(float* v, std::size_t n, ValueType type) {
  if (type == ValueType::Float16) {
    comm::round_to_float16(v, n);
  } else if (type == ValueType::BFloat16) {
    for (std::size_t i = 0; i < n; ++i) v[i] = comm::from_bfloat16(comm::to_bfloat16(v[i]));
  }
}

Layout layout_of(const std::vector<bridge::ParamShape>& shapes) {
  Layout layout;
  std::size_t offset = 0;
  for (const auto& p : shapes) {
    const bool table = p.shape.size() >= 2 && p.shape[0] > 0;
    const std::size_t rows = table ? p.shape[0] : 1;
    layout.push_back({offset, rows, p.size() / rows});
    offset += p.size();
  }
  return layout;
}

std::size_t SparseDelta::rows() const {
  std::size_t n = 0;
  for (const auto& p : parts) n += p.rows.size();
  return n;
}

void SparseDelta::clear() {
  for (auto& p : parts) {
    p.rows.clear();
    p.values.clear();
    p.weights.clear();
  }
}

void SparseDelta::add(const SparseDelta& o, const Layout& layout) {
  for (std::size_t t = 0; t < parts.size(); ++t) add_part(parts[t], o.parts[t], layout[t].cols);
}

void SparseDelta::normalise(const Layout& layout, core::Workers* workers) {
  core::Workers alone;
  core::Workers& share = workers ? *workers : alone;
  for (std::size_t t = 0; t < parts.size(); ++t) {
    Part& p = parts[t];
    if (p.weights.empty()) continue;
    const std::size_t cols = layout[t].cols;
    share.for_range(p.rows.size(), kRowGrain, [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = begin; k < end; ++k) {
        const float inv = p.weights[k] > 0 ? 1.0f / p.weights[k] : 0.0f;
        for (std::size_t c = 0; c < cols; ++c) p.values[k * cols + c] *= inv;
      }
    });
    p.weights.clear();
  }
}

void SparseDelta::apply_to(float* w, const Layout& layout) const {
  for (std::size_t t = 0; t < parts.size(); ++t) {
    const Part& p = parts[t];
    const std::size_t cols = layout[t].cols;
    for (std::size_t k = 0; k < p.rows.size(); ++k) {
      float* row = w + layout[t].offset + static_cast<std::size_t>(p.rows[k]) * cols;
      const float* v = p.values.data() + k * cols;
      for (std::size_t c = 0; c < cols; ++c) row[c] += v[c];
    }
  }
}

void SparseDelta::round_to(ValueType type) {
  for (auto& p : parts) round_values(p.values.data(), p.values.size(), type);
}

std::vector<std::uint8_t> SparseDelta::encode(const Layout& layout, ValueType type, std::size_t front) const {
  std::vector<std::uint8_t> out(front, 0);
  encode(out, layout, type, front);
  return out;
}

void SparseDelta::encode(std::vector<std::uint8_t>& out, const Layout& layout, ValueType type, std::size_t front,
                         core::Workers* workers) const {
  bool weighted = false;
  std::size_t bytes = front + 4 + 4 * parts.size();
  for (std::size_t t = 0; t < parts.size(); ++t) {
    weighted = weighted || !parts[t].weights.empty();
    bytes += parts[t].rows.size() * (4 + layout[t].cols * value_bytes(type));
  }
  if (weighted) bytes += 4 * rows();
  out.resize(bytes);
  std::uint8_t* at = out.data() + front;
  auto put = [&at](const void* p, std::size_t n) {
    if (n > 0) std::memcpy(at, p, n);
    at += n;
  };
  const std::uint32_t flags = weighted ? kWeights : 0;
  put(&flags, 4);
  for (const auto& p : parts) {
    const auto n = static_cast<std::uint32_t>(p.rows.size());
    put(&n, 4);
  }
  core::Workers alone;
  core::Workers& share = workers ? *workers : alone;
  for (std::size_t t = 0; t < parts.size(); ++t) {
    const Part& p = parts[t];
    put(p.rows.data(), p.rows.size() * 4);
    const std::size_t n = p.values.size(), cols = layout[t].cols;
    if (type == ValueType::Float32) {
      put(p.values.data(), n * 4);
    } else {
      // 16-bit values start at an even offset (every field before them is a multiple of 2 bytes long).
      auto* half = reinterpret_cast<std::uint16_t*>(at);
      share.for_range(p.rows.size(), kRowGrain, [&](std::size_t begin, std::size_t end) {
        const float* v = p.values.data() + begin * cols;
        const std::size_t m = (end - begin) * cols;
        std::uint16_t* h = half + begin * cols;
        if (type == ValueType::Float16) {
          comm::to_float16(v, h, m);
        } else {
          for (std::size_t k = 0; k < m; ++k) h[k] = comm::to_bfloat16(v[k]);
        }
      });
      at += n * 2;
    }
    if (weighted) {
      if (p.weights.empty()) {
        std::memset(at, 0, p.rows.size() * 4);
        at += p.rows.size() * 4;
      } else {
        put(p.weights.data(), p.rows.size() * 4);
      }
    }
  }
}

SparseDelta SparseDelta::decode(const std::vector<std::uint8_t>& bytes, const Layout& layout, ValueType type,
                                std::size_t skip) {
  SparseDelta d(layout.size());
  d.decode_from(bytes, layout, type, skip);
  return d;
}

namespace {

// The header of an encoded delta: per-row weights or not, and each table's row count, checked against `layout`.
std::vector<std::uint32_t> read_header(Reader& in, const Layout& layout, bool& weighted) {
  std::uint32_t flags = 0;
  in.get(&flags, 4);
  weighted = (flags & kWeights) != 0;
  std::vector<std::uint32_t> counts(layout.size());
  for (std::size_t t = 0; t < layout.size(); ++t) {
    in.get(&counts[t], 4);
    if (counts[t] > layout[t].rows)
      throw comm::Error("sparse weights: " + std::to_string(counts[t]) + " rows for table " + std::to_string(t) +
                        " of " + std::to_string(layout[t].rows));
  }
  return counts;
}

// Table t's n row indices, copied into `out` and checked: sorted, distinct and inside the table.
void read_rows(Reader& in, std::uint32_t n, const Layout& layout, std::size_t t, std::vector<std::uint32_t>& out) {
  out.resize(n);
  in.get(out.data(), std::size_t{n} * 4);
  for (std::size_t k = 0; k < n; ++k)
    if (out[k] >= layout[t].rows || (k > 0 && out[k] <= out[k - 1]))
      throw comm::Error("sparse weights: row " + std::to_string(out[k]) + " of table " + std::to_string(t) +
                        " is out of order or outside its " + std::to_string(layout[t].rows) + " rows");
}

// n values of `type` at `at` (an even offset for 16-bit values) into `out`.
void decode_values(const std::uint8_t* at, ValueType type, float* out, std::size_t n) {
  if (type == ValueType::Float32) {
    if (n > 0) std::memcpy(out, at, n * 4);
    return;
  }
  const auto* half = reinterpret_cast<const std::uint16_t*>(at);
  if (type == ValueType::Float16) {
    comm::from_float16(half, out, n);
  } else {
    for (std::size_t k = 0; k < n; ++k) out[k] = comm::from_bfloat16(half[k]);
  }
}

// n values of `type` from `in` into `out`.
void read_values(Reader& in, ValueType type, float* out, std::size_t n) {
  decode_values(in.take(n * value_bytes(type)), type, out, n);
}

}  // namespace

void SparseDelta::decode_from(const std::vector<std::uint8_t>& bytes, const Layout& layout, ValueType type,
                              std::size_t skip) {
  Reader in(bytes, skip);
  bool weighted = false;
  const auto counts = read_header(in, layout, weighted);
  parts.resize(layout.size());
  for (std::size_t t = 0; t < layout.size(); ++t) {
    Part& p = parts[t];
    read_rows(in, counts[t], layout, t, p.rows);
    p.values.resize(p.rows.size() * layout[t].cols);
    read_values(in, type, p.values.data(), p.values.size());
    p.weights.clear();
    if (weighted) {
      p.weights.resize(p.rows.size());
      in.get(p.weights.data(), p.weights.size() * 4);
    }
  }
  if (!in.done())
    throw comm::Error("sparse weights: " + std::to_string(bytes.size() - skip) + " bytes, more than the rows");
}

void SparseDelta::merge_encoded(const std::vector<std::uint8_t>& bytes, const Layout& layout, ValueType type,
                                std::size_t skip, SparseDelta& spare, core::Workers* workers) {
  Reader in(bytes, skip);
  bool weighted = false;
  const auto counts = read_header(in, layout, weighted);
  parts.resize(layout.size());
  spare.parts.resize(layout.size());
  core::Workers alone;
  core::Workers& share = workers ? *workers : alone;
  std::vector<std::uint32_t> rows;
  constexpr std::size_t kNone = SIZE_MAX;
  std::vector<std::pair<std::size_t, std::size_t>> from;  // each row of the sum: its place here and in `bytes`
  for (std::size_t t = 0; t < layout.size(); ++t) {
    const std::size_t cols = layout[t].cols;
    read_rows(in, counts[t], layout, t, rows);
    const std::size_t row_bytes = cols * value_bytes(type);
    const std::uint8_t* values = in.take(counts[t] * row_bytes);
    const std::uint8_t* weights = weighted ? in.take(std::size_t{counts[t]} * 4) : nullptr;
    Part& a = parts[t];
    if (rows.empty()) continue;
    Part& sum = spare.parts[t];
    from.clear();
    sum.rows.clear();
    for (std::size_t i = 0, j = 0; i < a.rows.size() || j < rows.size();) {
      if (j == rows.size() || (i < a.rows.size() && a.rows[i] < rows[j])) {
        from.emplace_back(i, kNone);
        sum.rows.push_back(a.rows[i++]);
      } else {
        const bool both = i < a.rows.size() && a.rows[i] == rows[j];
        from.emplace_back(both ? i++ : kNone, j);
        sum.rows.push_back(rows[j++]);
      }
    }
    const bool weigh = weights || !a.weights.empty();  // a row without a weight has weight 0
    sum.values.resize(from.size() * cols);
    sum.weights.resize(weigh ? from.size() : 0);
    share.for_range(from.size(), kRowGrain, [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = begin; k < end; ++k) {
        const auto [i, j] = from[k];
        float* to = sum.values.data() + k * cols;
        if (j == kNone) {
          std::memcpy(to, a.values.data() + i * cols, cols * sizeof(float));
          continue;
        }
        decode_values(values + j * row_bytes, type, to, cols);
        if (i == kNone) continue;
        const float* x = a.values.data() + i * cols;
#pragma omp simd
        for (std::size_t c = 0; c < cols; ++c) to[c] += x[c];
      }
    });
    if (weigh) {
      for (std::size_t k = 0; k < from.size(); ++k) {
        const auto [i, j] = from[k];
        float b = 0.0f;
        if (weights && j != kNone) std::memcpy(&b, weights + j * 4, 4);
        const float x = i == kNone || a.weights.empty() ? 0.0f : a.weights[i];
        sum.weights[k] = i == kNone ? b : j == kNone ? x : x + b;
      }
    }
    std::swap(a, sum);
  }
  if (!in.done())
    throw comm::Error("sparse weights: " + std::to_string(bytes.size() - skip) + " bytes, more than the rows");
}

void SparseDelta::add_encoded(const std::vector<std::uint8_t>& bytes, const Layout& layout, ValueType type,
                              std::size_t skip, float* w, float* also, core::Workers* workers) {
  Reader in(bytes, skip);
  bool weighted = false;
  const auto counts = read_header(in, layout, weighted);
  core::Workers alone;
  core::Workers& share = workers ? *workers : alone;
  std::vector<std::uint32_t> rows;
  for (std::size_t t = 0; t < layout.size(); ++t) {
    const std::size_t cols = layout[t].cols;
    read_rows(in, counts[t], layout, t, rows);
    const std::size_t row_bytes = cols * value_bytes(type);
    const std::uint8_t* values = in.take(counts[t] * row_bytes);
    share.for_range(counts[t], kRowGrain, [&](std::size_t begin, std::size_t end) {
      std::vector<float> row(cols);
      for (std::size_t k = begin; k < end; ++k) {
        decode_values(values + k * row_bytes, type, row.data(), cols);
        const std::size_t at = layout[t].offset + static_cast<std::size_t>(rows[k]) * cols;
        float* x = w + at;
#pragma omp simd
        for (std::size_t c = 0; c < cols; ++c) x[c] += row[c];
        if (!also) continue;
        float* y = also + at;
#pragma omp simd
        for (std::size_t c = 0; c < cols; ++c) y[c] += row[c];
      }
    });
    if (weighted) in.take(std::size_t{counts[t]} * 4);
  }
  if (!in.done())
    throw comm::Error("sparse weights: " + std::to_string(bytes.size() - skip) + " bytes, more than the rows");
}

}  // namespace fedavg::training
