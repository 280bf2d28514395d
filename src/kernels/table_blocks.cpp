#include "kernels/table_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/vector_ops.hpp"

namespace fedavg::kernels {

namespace {

// The row counts of sgd_rows, all zero between calls: O(batch) work per step, not O(rows).
std::vector<std::uint32_t>& row_counts(std::int64_t rows) {
  static thread_local std::vector<std::uint32_t> counts;
  if (counts.size() < static_cast<std::size_t>(rows)) counts.resize(static_cast<std::size_t>(rows), 0);
  return counts;
}

// Asks for `count` rows ahead of their use: they are scattered over the table, where the hardware's prefetchers
// cannot guess them.
inline void prefetch_rows(const TableRef& t, const std::int64_t* ids, std::int64_t count, bool write) {
  const std::int64_t bytes = t.dim * static_cast<std::int64_t>(sizeof(float));
  for (std::int64_t j = 0; j < count; ++j) {
    const char* row = reinterpret_cast<const char*>(t.data + ids[j] * t.dim);
    for (std::int64_t b = 0; b < bytes; b += 64) {
      if (write) __builtin_prefetch(row + b, 1);
      else __builtin_prefetch(row + b, 0);
    }
  }
}

void check_ids(const std::int64_t* ids, std::int64_t count, std::int64_t rows) {
  for (std::int64_t i = 0; i < count; ++i)
    if (ids[i] < 0 || ids[i] >= rows)
      throw std::out_of_range("word id " + std::to_string(ids[i]) + " outside [0, " + std::to_string(rows) + ")");
}

FEDAVG_CLONES void sum_rows(const TableRef& t, const std::int64_t* ids, std::int64_t n, std::int64_t m, float scale,
                            float* out) {
  const std::int64_t d = t.dim;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prefetch_rows(t, ids + (i + kAhead) * m, m, false);
    float* o = out + i * d;
    const std::int64_t* w = ids + i * m;
    std::copy_n(t.data + w[0] * d, d, o);
    for (std::int64_t j = 1; j < m; ++j) axpy(1.0f, t.data + w[j] * d, o, d);
    if (scale != 1.0f)
      for (std::int64_t c = 0; c < d; ++c) o[c] *= scale;
  }
}

FEDAVG_CLONES double score(const TableRef& t, const float* h, const std::int64_t* target, const std::int64_t* noise,
                           std::int64_t n, std::int64_t k, float grad_scale, float* g_target, float* g_noise,
                           float* grad_h) {
  const std::int64_t d = t.dim;
  double loss = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      prefetch_rows(t, target + i + kAhead, 1, false);
      prefetch_rows(t, noise + (i + kAhead) * k, k, false);
    }
    const float* hi = h + i * d;
    float* ghi = grad_h ? grad_h + i * d : nullptr;
    if (ghi) std::fill_n(ghi, d, 0.0f);
    float window_loss = 0.0f;
    for (std::int64_t j = 0; j <= k; ++j) {
      const std::int64_t word = j == 0 ? target[i] : noise[i * k + j - 1];
      float g = 0.0f;
      const float* u = t.data + word * d;
      if (j == 0 || word != target[i]) {  // word2vec skips a noise word equal to the target
        const float s = dot(u, hi, d);
        const Softplus f = softplus(j == 0 ? -s : s);  // the word's loss
        window_loss += f.loss;
        g = j == 0 ? -grad_scale * f.sigmoid : grad_scale * f.sigmoid;  // its derivative by s
      }
      if (ghi) {
        if (j == 0) g_target[i] = g;
        else g_noise[i * k + j - 1] = g;
        if (g != 0.0f) axpy(g, u, ghi, d);
      }
    }
    loss += window_loss;
  }
  return loss;
}

// Adds one gradient's share of the step; counts (when not null) holds each row's occurrences.
FEDAVG_CLONES void apply(const TableRef& t, const RowGrad& g, float step, Duplicates duplicates,
                         const std::uint32_t* counts) {
  const std::int64_t d = t.dim;
  for (std::int64_t i = 0; i < g.n; ++i) {
    if (i + kAhead < g.n) prefetch_rows(t, g.ids + (i + kAhead) * g.m, g.m, true);
    const float* v = g.vecs + i * d;
    for (std::int64_t j = 0; j < g.m; ++j) {
      const std::int64_t at = i * g.m + j, row = g.ids[at];
      float a = step * g.alpha * (g.coef ? g.coef[at] : 1.0f);
      if (counts) {
        const auto c = static_cast<float>(counts[row]);
        a *= duplicates == Duplicates::kSqrt ? 1.0f / std::sqrt(c) : 1.0f / c;
      }
      if (a != 0.0f) axpy(a, v, t.data + row * d, d);
    }
  }
}

}  // namespace

void rows_sum(const TableRef& t, const std::int64_t* ids, std::int64_t n, std::int64_t m, float scale, float* out) {
  if (n < 0 || m < 1 || t.dim < 1) throw std::invalid_argument("rows_sum: bad shape");
  check_ids(ids, n * m, t.rows);
  sum_rows(t, ids, n, m, scale, out);
}

double negative_sampling(const TableRef& t, const float* h, const std::int64_t* target, const std::int64_t* noise,
                         std::int64_t n, std::int64_t k, float grad_scale, float* g_target, float* g_noise,
                         float* grad_h) {
  if (n < 0 || k < 0 || t.dim < 1) throw std::invalid_argument("negative_sampling: bad shape");
  if ((g_target == nullptr) != (grad_h == nullptr) || (g_noise == nullptr && grad_h != nullptr && k > 0))
    throw std::invalid_argument("negative_sampling: give g_target, g_noise and grad_h, or none");
  check_ids(target, n, t.rows);
  check_ids(noise, n * k, t.rows);
  return score(t, h, target, noise, n, k, grad_scale, g_target, g_noise, grad_h);
}

void sgd_rows(const TableRef& t, const std::vector<RowGrad>& grads, float step, Duplicates duplicates, bool* written) {
  for (const RowGrad& g : grads) {
    if (g.n < 0 || g.m < 1 || t.dim < 1) throw std::invalid_argument("sgd_rows: bad shape");
    check_ids(g.ids, g.n * g.m, t.rows);
  }
  const bool scaled = duplicates != Duplicates::kSum;
  std::vector<std::uint32_t>* counts = scaled ? &row_counts(t.rows) : nullptr;
  if (counts)
    for (const RowGrad& g : grads)
      for (std::int64_t i = 0; i < g.n * g.m; ++i) ++(*counts)[static_cast<std::size_t>(g.ids[i])];
  for (const RowGrad& g : grads) apply(t, g, step, duplicates, counts ? counts->data() : nullptr);
  for (const RowGrad& g : grads)
    for (std::int64_t i = 0; i < g.n * g.m; ++i) {
      if (counts) (*counts)[static_cast<std::size_t>(g.ids[i])] = 0;
      if (written) written[g.ids[i]] = true;
    }
}

}  // namespace fedavg::kernels
