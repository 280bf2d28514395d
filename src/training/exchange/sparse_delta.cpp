#include "training/exchange/sparse_delta.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "comm/error.hpp"
#include "comm/float16.hpp"
#include "core/error.hpp"
#include "training/exchange/row_merge.hpp"

namespace fedavg::training {
namespace {

constexpr std::uint32_t kWeights = 1;  // header flag: per-row weights follow the values

// The int8 scale of a row (sparse_delta.hpp), at least 2^-126 (so that its inverse is finite too): 0 for a row of
// zeros, NaN where a value is not finite.
float int8_scale(const float* v, std::size_t n) {
  float most = 0.0f;
  float nan = 0.0f;  // NaN once a value is not finite (x 0 is NaN for them alone)
#pragma omp simd reduction(max : most) reduction(+ : nan)
  for (std::size_t i = 0; i < n; ++i) {
    most = std::max(most, std::fabs(v[i]));
    nan += v[i] * 0.0f;
  }
  if (std::isnan(nan)) return std::numeric_limits<float>::quiet_NaN();
  if (most == 0.0f) return 0.0f;
  const float least = most / 127.0f;
  if (least <= std::numeric_limits<float>::min()) return std::numeric_limits<float>::min();
  int e = 0;
  const float m = std::frexp(least, &e);  // least = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0f, m == 0.5f ? e - 1 : e);
}

// x rounded to the nearest whole number (ties to even), for |x| <= 127: adding 1.5 x 2^23 leaves no fraction bits.
inline float nearest_step(float x) {
  constexpr float kShift = 12582912.0f;
  return (x + kShift) - kShift;
}

// The n values of a row at `scale` as whole steps within +-127, into `out` (0 for a row of zeros, and for one of
// non-finite values, whose scale is NaN). Exact: the scale is a power of two.
template <typename Step> void int8_steps(const float* v, std::size_t n, float scale, Step* out) {
  if (!(scale > 0.0f)) {  // 0 or NaN (int8_scale gives no other scale below 2^-126, and none infinite)
    std::fill(out, out + n, Step{0});
    return;
  }
  const float inv = 1.0f / scale;
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Step>(nearest_step(std::clamp(v[i] * inv, -127.0f, 127.0f)));
}

// One row as int8: its scale, then a byte per value.
void encode_int8_row(const float* v, std::size_t cols, std::uint8_t* at) {
  const float scale = int8_scale(v, cols);
  std::memcpy(at, &scale, 4);
  int8_steps(v, cols, scale, reinterpret_cast<std::int8_t*>(at + 4));
}

void decode_int8_row(const std::uint8_t* at, float* out, std::size_t cols) {
  float scale = 0.0f;
  std::memcpy(&scale, at, 4);
  const auto* q = reinterpret_cast<const std::int8_t*>(at + 4);
#pragma omp simd
  for (std::size_t c = 0; c < cols; ++c) out[c] = static_cast<float>(q[c]) * scale;
}

// Runs fn over [0, n) in pieces of at least kRowGrain rows: shared among `workers`, or (null) on the caller alone.
void for_rows(core::Workers* workers, std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn) {
  if (workers) {
    workers->for_range(n, kRowGrain, fn);
    return;
  }
  core::Workers alone;
  alone.for_range(n, kRowGrain, fn);
}

class Reader {
 public:
  Reader(const std::vector<std::uint8_t>& b, std::size_t at) : b_(b), start_(at), at_(at) {}
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
  // Throws comm::Error unless every byte has been read.
  void finish() const {
    if (at_ != b_.size())
      throw comm::Error("sparse weights: " + std::to_string(b_.size() - start_) + " bytes, more than the rows");
  }

 private:
  const std::vector<std::uint8_t>& b_;
  std::size_t start_;
  std::size_t at_;
};

// Fills a buffer sized for what is written, field after field.
class Writer {
 public:
  explicit Writer(std::uint8_t* at) : at_(at) {}
  void put(const void* p, std::size_t n) {
    if (n > 0) std::memcpy(at_, p, n);
    at_ += n;
  }
  void zeros(std::size_t n) {
    if (n > 0) std::memset(at_, 0, n);
    at_ += n;
  }
  // The next n bytes, for the caller to fill.
  std::uint8_t* skip(std::size_t n) {
    at_ += n;
    return at_ - n;
  }

 private:
  std::uint8_t* at_;
};

constexpr std::size_t kNone = SIZE_MAX;
// Each row of a sum of two parts, ascending: its place in the one and in the other (kNone: not there).
using MergePlan = std::vector<std::pair<std::size_t, std::size_t>>;

void plan_merge(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b, MergePlan& plan) {
  plan.clear();
  merge_rows(
      a, b, [&](std::size_t i) { plan.emplace_back(i, kNone); }, [&](std::size_t j) { plan.emplace_back(kNone, j); },
      [&](std::size_t i, std::size_t j) { plan.emplace_back(i, j); });
}

// A vector that must grow takes what the sum holds, or half again its capacity if that is more: a large merge
// (a full round) allocates what it fills, not up to twice as much, and slow growth from round to round still
// reallocates rarely.
template <typename V> void grow(V& v, std::size_t size) {
  if (size > v.capacity()) v.reserve(std::max(size, v.capacity() + v.capacity() / 2));
  v.resize(size);
}

// a += b for one table, in place, so a's vectors only grow.
void add_part(SparseDelta::Part& a, const SparseDelta::Part& b, std::size_t cols) {
  if (b.rows.empty()) return;
  const bool weighted = !a.weights.empty() || !b.weights.empty();
  if (weighted) a.weights.resize(a.rows.size(), 0.0f);  // a row without a weight has weight 0
  MergePlan plan;
  plan_merge(a.rows, b.rows, plan);
  const std::size_t n = plan.size();
  grow(a.rows, n);
  grow(a.values, n * cols);
  if (weighted) grow(a.weights, n);
  // From the back: a row of a moves only to the right (k >= i), and so before its own place is written.
  for (std::size_t k = n; k-- > 0;) {
    const auto [i, j] = plan[k];
    float* to = a.values.data() + k * cols;
    if (i != kNone) {
      a.rows[k] = a.rows[i];
      if (k != i) std::memcpy(to, a.values.data() + i * cols, cols * sizeof(float));
      if (weighted) a.weights[k] = a.weights[i];
    }
    if (j == kNone) continue;
    const float* v = b.values.data() + j * cols;
    if (i != kNone) {
      for (std::size_t c = 0; c < cols; ++c) to[c] += v[c];
    } else {
      a.rows[k] = b.rows[j];
      std::memcpy(to, v, cols * sizeof(float));
    }
    if (weighted) {
      const float w = b.weights.empty() ? 0.0f : b.weights[j];
      a.weights[k] = i != kNone ? a.weights[k] + w : w;
    }
  }
}

// Part p's values (rows of `cols`) as `type` at `at` (an even offset for 16-bit values). `workers` share the rows.
void encode_values(const SparseDelta::Part& p, std::size_t cols, ValueType type, std::uint8_t* at,
                   core::Workers* workers) {
  if (type == ValueType::Float32) {
    if (!p.values.empty()) std::memcpy(at, p.values.data(), p.values.size() * 4);
    return;
  }
  if (type == ValueType::Int8) {
    const std::size_t bytes = row_bytes(type, cols);
    for_rows(workers, p.rows.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = begin; k < end; ++k) encode_int8_row(p.values.data() + k * cols, cols, at + k * bytes);
    });
    return;
  }
  auto* half = reinterpret_cast<std::uint16_t*>(at);
  for_rows(workers, p.rows.size(), [&](std::size_t begin, std::size_t end) {
    const float* v = p.values.data() + begin * cols;
    const std::size_t m = (end - begin) * cols;
    std::uint16_t* h = half + begin * cols;
    if (type == ValueType::Float16) {
      comm::to_float16(v, h, m);
    } else {
      for (std::size_t k = 0; k < m; ++k) h[k] = comm::to_bfloat16(v[k]);
    }
  });
}

}  // namespace

void round_values(float* v, std::size_t n, ValueType type) {
  if (type == ValueType::Float16) {
    comm::round_to_float16(v, n);
  } else if (type == ValueType::BFloat16) {
    for (std::size_t i = 0; i < n; ++i) v[i] = comm::from_bfloat16(comm::to_bfloat16(v[i]));
  } else if (type == ValueType::Int8) {
    const float scale = int8_scale(v, n);
    int8_steps(v, n, scale, v);
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) v[i] *= scale;
  }
}

std::size_t row_bytes(ValueType type, std::size_t cols) {
  switch (type) {
    case ValueType::Float32: return cols * 4;
    case ValueType::Float16:
    case ValueType::BFloat16: return cols * 2;
    case ValueType::Int8: return 4 + cols;
  }
  return cols * 4;
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

void check_written_rows(const std::vector<std::uint32_t>& rows, std::size_t param, const Table& t) {
  if (!rows.empty() && rows.back() >= t.rows)
    throw core::Error("engine.written_rows: row " + std::to_string(rows.back()) + " of parameter " +
                      std::to_string(param) + ", which has " + std::to_string(t.rows) + " rows");
}

std::size_t params_of(const Layout& layout) {
  return layout.empty() ? 0 : layout.back().offset + layout.back().rows * layout.back().cols;
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

void SparseDelta::normalise(const Layout& layout, const CombineRule& rule, int learners, core::Workers* workers) {
  for (std::size_t t = 0; t < parts.size(); ++t) {
    Part& p = parts[t];
    if (p.weights.empty()) continue;
    const std::size_t cols = layout[t].cols;
    for_rows(workers, p.rows.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = begin; k < end; ++k) {
        const float inv = rule.row_factor(p.weights[k], learners);
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

void SparseDelta::encode(std::vector<std::uint8_t>& out, const Layout& layout, ValueType type, std::size_t front,
                         core::Workers* workers) const {
  bool weighted = false;
  std::size_t bytes = front + 4 + 4 * parts.size();
  for (std::size_t t = 0; t < parts.size(); ++t) {
    weighted = weighted || !parts[t].weights.empty();
    bytes += parts[t].rows.size() * (4 + row_bytes(type, layout[t].cols));
  }
  if (weighted) bytes += 4 * rows();
  out.resize(bytes);
  Writer to(out.data() + front);
  const std::uint32_t flags = weighted ? kWeights : 0;
  to.put(&flags, 4);
  for (const auto& p : parts) {
    const auto n = static_cast<std::uint32_t>(p.rows.size());
    to.put(&n, 4);
  }
  for (std::size_t t = 0; t < parts.size(); ++t) {
    const Part& p = parts[t];
    to.put(p.rows.data(), p.rows.size() * 4);
    // 16-bit values start at an even offset (every field before them is a multiple of 2 bytes long).
    encode_values(p, layout[t].cols, type, to.skip(p.rows.size() * row_bytes(type, layout[t].cols)), workers);
    if (!weighted) continue;
    if (p.weights.empty()) {
      to.zeros(p.rows.size() * 4);
    } else {
      to.put(p.weights.data(), p.rows.size() * 4);
    }
  }
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

// One row's n values of `type` at `at` (an even offset for 16-bit values) into `out`.
void decode_values(const std::uint8_t* at, ValueType type, float* out, std::size_t n) {
  if (type == ValueType::Float32) {
    if (n > 0) std::memcpy(out, at, n * 4);
    return;
  }
  if (type == ValueType::Int8) {
    decode_int8_row(at, out, n);
    return;
  }
  const auto* half = reinterpret_cast<const std::uint16_t*>(at);
  if (type == ValueType::Float16) {
    comm::from_float16(half, out, n);
  } else {
    for (std::size_t k = 0; k < n; ++k) out[k] = comm::from_bfloat16(half[k]);
  }
}

// One table of an encoded delta, read in place: its rows (checked), and where its values and weights lie.
struct EncodedPart {
  std::vector<std::uint32_t> rows;
  std::size_t bytes = 0;                  // of one row's values
  const std::uint8_t* values = nullptr;   // rows.size() x bytes
  const std::uint8_t* weights = nullptr;  // one float per row, or null (none sent)

  // Reads table t's `n` rows from `in`.
  void read(Reader& in, std::uint32_t n, const Layout& layout, std::size_t t, ValueType type, bool weighted) {
    read_rows(in, n, layout, t, rows);
    bytes = training::row_bytes(type, layout[t].cols);
    values = in.take(n * bytes);
    weights = weighted ? in.take(std::size_t{n} * 4) : nullptr;
  }
  // Row k's values into `out`.
  void row(std::size_t k, ValueType type, float* out, std::size_t cols) const {
    decode_values(values + k * bytes, type, out, cols);
  }
  float weight(std::size_t k) const {
    float w = 0.0f;
    if (weights) std::memcpy(&w, weights + k * 4, 4);
    return w;
  }
};

// sum = a + b for one table, row by row as `plan` (plan_merge of their rows) lays the sum out. `workers` share the
// rows.
void merge_part(const SparseDelta::Part& a, const EncodedPart& b, const MergePlan& plan, std::size_t cols,
                ValueType type, SparseDelta::Part& sum, core::Workers* workers) {
  sum.rows.resize(plan.size());
  for (std::size_t k = 0; k < plan.size(); ++k)
    sum.rows[k] = plan[k].first != kNone ? a.rows[plan[k].first] : b.rows[plan[k].second];
  const bool weigh = b.weights || !a.weights.empty();  // a row without a weight has weight 0
  sum.values.resize(plan.size() * cols);
  sum.weights.resize(weigh ? plan.size() : 0);
  for_rows(workers, plan.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      const auto [i, j] = plan[k];
      float* to = sum.values.data() + k * cols;
      if (j == kNone) {
        std::memcpy(to, a.values.data() + i * cols, cols * sizeof(float));
        continue;
      }
      b.row(j, type, to, cols);
      if (i == kNone) continue;
      const float* x = a.values.data() + i * cols;
#pragma omp simd
      for (std::size_t c = 0; c < cols; ++c) to[c] += x[c];
    }
  });
  if (!weigh) return;
  for (std::size_t k = 0; k < plan.size(); ++k) {
    const auto [i, j] = plan[k];
    const float w = j != kNone ? b.weight(j) : 0.0f;
    const float x = i == kNone || a.weights.empty() ? 0.0f : a.weights[i];
    sum.weights[k] = i == kNone ? w : j == kNone ? x : x + w;
  }
}

}  // namespace

void SparseDelta::merge_encoded(const std::vector<std::uint8_t>& bytes, const Layout& layout, ValueType type,
                                std::size_t skip, SparseDelta& spare, core::Workers* workers) {
  Reader in(bytes, skip);
  bool weighted = false;
  const auto counts = read_header(in, layout, weighted);
  parts.resize(layout.size());
  spare.parts.resize(layout.size());
  EncodedPart b;
  MergePlan plan;
  for (std::size_t t = 0; t < layout.size(); ++t) {
    b.read(in, counts[t], layout, t, type, weighted);
    if (b.rows.empty()) continue;
    plan_merge(parts[t].rows, b.rows, plan);
    merge_part(parts[t], b, plan, layout[t].cols, type, spare.parts[t], workers);
    std::swap(parts[t], spare.parts[t]);
  }
  in.finish();
}

void SparseDelta::add_encoded(const std::vector<std::uint8_t>& bytes, const Layout& layout, ValueType type,
                              std::size_t skip, float* w, float* also, core::Workers* workers) {
  Reader in(bytes, skip);
  bool weighted = false;
  const auto counts = read_header(in, layout, weighted);
  EncodedPart b;
  for (std::size_t t = 0; t < layout.size(); ++t) {
    b.read(in, counts[t], layout, t, type, weighted);
    const std::size_t cols = layout[t].cols;
    for_rows(workers, counts[t], [&](std::size_t begin, std::size_t end) {
      std::vector<float> row(cols);
      for (std::size_t k = begin; k < end; ++k) {
        b.row(k, type, row.data(), cols);
        const std::size_t at = layout[t].offset + static_cast<std::size_t>(b.rows[k]) * cols;
        float* x = w + at;
#pragma omp simd
        for (std::size_t c = 0; c < cols; ++c) x[c] += row[c];
        if (!also) continue;
        float* y = also + at;
#pragma omp simd
        for (std::size_t c = 0; c < cols; ++c) y[c] += row[c];
      }
    });
  }
  in.finish();
}

}  // namespace fedavg::training
