#include "training/sparse_delta.hpp"

#include <cstring>

#include "comm/error.hpp"
#include "comm/float16.hpp"

namespace fedavg::training {
namespace {

constexpr std::uint32_t kWeights = 1;  // header flag: per-row weights follow the values

std::size_t value_bytes(ValueType t) { return t == ValueType::Float32 ? 4 : 2; }

void put(std::vector<std::uint8_t>& out, const void* p, std::size_t n) {
  const auto* b = static_cast<const std::uint8_t*>(p);
  out.insert(out.end(), b, b + n);
}

class Reader {
 public:
  Reader(const std::vector<std::uint8_t>& b, std::size_t at) : b_(b), at_(at) {}
  void get(void* p, std::size_t n) {
    if (at_ + n > b_.size())
      throw comm::Error("sparse weights: payload of " + std::to_string(b_.size()) + " bytes ends early");
    std::memcpy(p, b_.data() + at_, n);
    at_ += n;
  }
  bool done() const { return at_ == b_.size(); }

 private:
  const std::vector<std::uint8_t>& b_;
  std::size_t at_;
};

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

void SparseDelta::add(const SparseDelta& o, const Layout& layout) {
  for (std::size_t t = 0; t < parts.size(); ++t) {
    const Part& b = o.parts[t];
    if (b.rows.empty()) continue;
    Part& a = parts[t];
    const std::size_t cols = layout[t].cols;
    const bool weighted = !a.weights.empty() || !b.weights.empty();
    Part merged;
    merged.rows.reserve(a.rows.size() + b.rows.size());
    merged.values.reserve((a.rows.size() + b.rows.size()) * cols);
    std::size_t i = 0, j = 0;
    auto take = [&](const Part& p, std::size_t k, bool first) {
      const float* v = p.values.data() + k * cols;
      if (first) {
        merged.rows.push_back(p.rows[k]);
        merged.values.insert(merged.values.end(), v, v + cols);
        if (weighted) merged.weights.push_back(p.weights.empty() ? 0.0f : p.weights[k]);
      } else {
        float* into = merged.values.data() + merged.values.size() - cols;
        for (std::size_t c = 0; c < cols; ++c) into[c] += v[c];
        if (weighted) merged.weights.back() += p.weights.empty() ? 0.0f : p.weights[k];
      }
    };
    while (i < a.rows.size() || j < b.rows.size()) {
      if (j == b.rows.size() || (i < a.rows.size() && a.rows[i] < b.rows[j])) {
        take(a, i++, true);
      } else if (i == a.rows.size() || b.rows[j] < a.rows[i]) {
        take(b, j++, true);
      } else {
        take(a, i++, true);
        take(b, j++, false);
      }
    }
    a = std::move(merged);
  }
}

void SparseDelta::normalise(const Layout& layout) {
  for (std::size_t t = 0; t < parts.size(); ++t) {
    Part& p = parts[t];
    if (p.weights.empty()) continue;
    const std::size_t cols = layout[t].cols;
    for (std::size_t k = 0; k < p.rows.size(); ++k) {
      const float inv = p.weights[k] > 0 ? 1.0f / p.weights[k] : 0.0f;
      for (std::size_t c = 0; c < cols; ++c) p.values[k * cols + c] *= inv;
    }
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
  bool weighted = false;
  std::size_t bytes = front + 4;
  for (std::size_t t = 0; t < parts.size(); ++t) {
    weighted = weighted || !parts[t].weights.empty();
    bytes += 4 + parts[t].rows.size() * (4 + layout[t].cols * value_bytes(type) + 4);
  }
  std::vector<std::uint8_t> out(front, 0);
  out.reserve(bytes);
  const std::uint32_t flags = weighted ? kWeights : 0;
  put(out, &flags, 4);
  for (const auto& p : parts) {
    const auto n = static_cast<std::uint32_t>(p.rows.size());
    put(out, &n, 4);
  }
  std::vector<std::uint16_t> half;
  for (std::size_t t = 0; t < parts.size(); ++t) {
    const Part& p = parts[t];
    put(out, p.rows.data(), p.rows.size() * 4);
    if (type == ValueType::Float32) {
      put(out, p.values.data(), p.values.size() * 4);
    } else {
      half.resize(p.values.size());
      if (type == ValueType::Float16) {
        comm::to_float16(p.values.data(), half.data(), half.size());
      } else {
        for (std::size_t k = 0; k < half.size(); ++k) half[k] = comm::to_bfloat16(p.values[k]);
      }
      put(out, half.data(), half.size() * 2);
    }
    if (weighted) {
      std::vector<float> w = p.weights;
      w.resize(p.rows.size(), 0.0f);
      put(out, w.data(), w.size() * 4);
    }
  }
  return out;
}

SparseDelta SparseDelta::decode(const std::vector<std::uint8_t>& bytes, const Layout& layout, ValueType type,
                                std::size_t skip) {
  Reader in(bytes, skip);
  std::uint32_t flags = 0;
  in.get(&flags, 4);
  SparseDelta d(layout.size());
  for (std::size_t t = 0; t < layout.size(); ++t) {
    std::uint32_t n = 0;
    in.get(&n, 4);
    if (n > layout[t].rows)
      throw comm::Error("sparse weights: " + std::to_string(n) + " rows for table " + std::to_string(t) + " of " +
                        std::to_string(layout[t].rows));
    d.parts[t].rows.resize(n);
  }
  std::vector<std::uint16_t> half;
  for (std::size_t t = 0; t < layout.size(); ++t) {
    Part& p = d.parts[t];
    const std::size_t cols = layout[t].cols;
    in.get(p.rows.data(), p.rows.size() * 4);
    for (std::size_t k = 0; k < p.rows.size(); ++k)
      if (p.rows[k] >= layout[t].rows || (k > 0 && p.rows[k] <= p.rows[k - 1]))
        throw comm::Error("sparse weights: row " + std::to_string(p.rows[k]) + " of table " + std::to_string(t) +
                          " is out of order or outside its " + std::to_string(layout[t].rows) + " rows");
    p.values.resize(p.rows.size() * cols);
    if (type == ValueType::Float32) {
      in.get(p.values.data(), p.values.size() * 4);
    } else {
      half.resize(p.values.size());
      in.get(half.data(), half.size() * 2);
      if (type == ValueType::Float16) {
        comm::from_float16(half.data(), p.values.data(), half.size());
      } else {
        for (std::size_t k = 0; k < half.size(); ++k) p.values[k] = comm::from_bfloat16(half[k]);
      }
    }
    if (flags & kWeights) {
      p.weights.resize(p.rows.size());
      in.get(p.weights.data(), p.weights.size() * 4);
    }
  }
  if (!in.done())
    throw comm::Error("sparse weights: " + std::to_string(bytes.size() - skip) + " bytes, more than the rows");
  return d;
}

}  // namespace fedavg::training
