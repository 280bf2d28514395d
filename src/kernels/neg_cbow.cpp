#include "kernels/neg_cbow.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/vector_ops.hpp"

namespace fedavg::kernels {

namespace {

// A batch's rows as offsets into the table, checked: the context rows [n, 2w] of the input vectors (each window's
// words first, their number in `words`; kNoWord slots after them), then the target and the noise words [n, 1+K] of
// the output vectors. Scratch reused from step to step (a fresh buffer would cost page faults on every step).
struct Workspace {
  std::vector<std::int64_t> ctx, outs, words;
  std::vector<float> h, grad_h, g, scale;
  std::vector<std::uint32_t> counts;  // [2V], all zero between steps
};

Workspace& workspace() {
  static thread_local Workspace ws;
  return ws;
}

struct Rows {
  const float* in;  // [V, D]
  float* out;       // [V, D]
  const std::int64_t* ctx;
  const std::int64_t* outs;
  std::int64_t n, ctx_width, out_width, dim;
  const std::int64_t* words;  // [n]: window i's context rows are ctx[i * ctx_width, + words[i])
};

// Asks for the rows of window i (when there is one) ahead of their use: they are scattered over the table, where
// the hardware's prefetchers cannot guess them.
inline void prefetch_window(const Rows& r, std::int64_t i, bool write) {
  if (i >= r.n) return;
  const std::int64_t bytes = r.dim * static_cast<std::int64_t>(sizeof(float));
  const auto ask = [&](const float* row) {
    for (std::int64_t b = 0; b < bytes; b += 64) {
      if (write) __builtin_prefetch(reinterpret_cast<const char*>(row) + b, 1);
      else __builtin_prefetch(reinterpret_cast<const char*>(row) + b, 0);
    }
  };
  for (std::int64_t j = 0; j < r.words[i]; ++j) ask(r.in + r.ctx[i * r.ctx_width + j] * r.dim);
  for (std::int64_t k = 0; k < r.out_width; ++k) ask(r.out + r.outs[i * r.out_width + k] * r.dim);
}

// The windows' loss; h [n, D] gets each window's context mean. With g [n, 1+K] and grad_h [n, D] (both or
// neither), also g = lr * (label - sigmoid(score)) per output row (0 for a noise word equal to the target) and
// grad_h = sum of g times the output rows, all at the weights as they are.
FEDAVG_CLONES double score(const Rows& r, float* h, float* grad_h, float* g, float lr) {
  const std::int64_t d = r.dim;
  double loss = 0.0;
  for (std::int64_t i = 0; i < r.n; ++i) {
    prefetch_window(r, i + kAhead, false);
    float* hi = h + i * d;
    const std::int64_t* ctx = r.ctx + i * r.ctx_width;
    std::copy_n(r.in + ctx[0] * d, d, hi);
    for (std::int64_t j = 1; j < r.words[i]; ++j) axpy(1.0f, r.in + ctx[j] * d, hi, d);
    const float mean = 1.0f / static_cast<float>(r.words[i]);
    for (std::int64_t c = 0; c < d; ++c) hi[c] *= mean;
    float* ghi = grad_h ? grad_h + i * d : nullptr;
    if (ghi) std::fill_n(ghi, d, 0.0f);
    const std::int64_t* outs = r.outs + i * r.out_width;
    float window_loss = 0.0f;
    for (std::int64_t k = 0; k < r.out_width; ++k) {
      float gk = 0.0f;
      const float* u = r.out + outs[k] * d;
      if (k == 0 || outs[k] != outs[0]) {  // word2vec skips a noise word equal to the target
        const float s = dot(u, hi, d);
        const Softplus f = softplus(k == 0 ? -s : s);  // the row's loss
        window_loss += f.loss;
        gk = k == 0 ? lr * f.sigmoid : -lr * f.sigmoid;
      }
      if (g) {
        g[i * r.out_width + k] = gk;
        if (gk != 0.0f) axpy(gk, u, ghi, d);
      }
    }
    loss += window_loss;
  }
  return loss;
}

// Adds the step: each context row gets grad_h times its scale, each output row g times its scale times h. scale
// [n, 2w + 1 + K] (the context rows' then the output rows'), or null for 1.
FEDAVG_CLONES void apply(const Rows& r, float* in, const float* h, const float* grad_h, const float* g,
                         const float* scale) {
  const std::int64_t d = r.dim, width = r.ctx_width + r.out_width;
  for (std::int64_t i = 0; i < r.n; ++i) {
    prefetch_window(r, i + kAhead, true);
    const float* s = scale ? scale + i * width : nullptr;
    for (std::int64_t j = 0; j < r.words[i]; ++j)
      axpy(s ? s[j] : 1.0f, grad_h + i * d, in + r.ctx[i * r.ctx_width + j] * d, d);
    for (std::int64_t k = 0; k < r.out_width; ++k) {
      const float a = g[i * r.out_width + k] * (s ? s[r.ctx_width + k] : 1.0f);
      if (a != 0.0f) axpy(a, h + i * d, r.out + r.outs[i * r.out_width + k] * d, d);
    }
  }
}

template <typename Id> std::int64_t checked(Id id, std::int64_t vocab) {
  const auto v = static_cast<std::int64_t>(id);
  if (v < 0 || v >= vocab)
    throw std::out_of_range("word id " + std::to_string(v) + " outside [0, " + std::to_string(vocab) + ")");
  return v;
}

// Fills ws.ctx, ws.words and ws.outs from the batch, checking every id, and sizes h; returns the rows.
template <typename Id> Rows rows_of(const NegBatch<Id>& b, Workspace& ws) {
  const std::int64_t width = 2 * b.window + 1, ctx_width = 2 * b.window, out_width = b.negatives + 1;
  if (b.window < 1 || b.negatives < 0 || b.windows < 0 || b.dim < 1 || b.vocab < 1)
    throw std::invalid_argument("neg_cbow: bad batch shape");
  ws.ctx.resize(static_cast<std::size_t>(b.windows * ctx_width));
  ws.words.resize(static_cast<std::size_t>(b.windows));
  ws.outs.resize(static_cast<std::size_t>(b.windows * out_width));
  ws.h.resize(static_cast<std::size_t>(b.windows * b.dim));
  for (std::int64_t i = 0; i < b.windows; ++i) {
    const Id* w = b.ids + i * width;
    std::int64_t* ctx = ws.ctx.data() + i * ctx_width;
    std::int64_t c = 0;
    for (std::int64_t j = 0; j < width; ++j)
      if (j != b.window && static_cast<std::int64_t>(w[j]) != kNoWord) ctx[c++] = checked(w[j], b.vocab);
    if (c == 0) throw std::out_of_range("window " + std::to_string(i) + " has no context word");
    ws.words[static_cast<std::size_t>(i)] = c;
    std::fill(ctx + c, ctx + ctx_width, kNoWord);
    std::int64_t* outs = ws.outs.data() + i * out_width;
    outs[0] = checked(w[b.window], b.vocab);
    for (std::int64_t k = 0; k < b.negatives; ++k) outs[1 + k] = checked(b.noise[i * b.negatives + k], b.vocab);
  }
  return {
      b.table,        b.table + b.vocab * b.dim, ws.ctx.data(), ws.outs.data(), b.windows, ctx_width, out_width, b.dim,
      ws.words.data()};
}

// ws.scale: per occurrence of a row in the batch, 1/sqrt(c) or 1/c for a row that occurs c times, plus the row's
// extra occurrences where there are any. Counts in ws.counts, which is zero again on return: the work is O(batch),
// not O(V).
void row_scales(const Rows& r, std::int64_t vocab, Duplicates duplicates, const float* extra, Workspace& ws) {
  ws.counts.resize(static_cast<std::size_t>(2 * vocab), 0);
  const std::int64_t width = r.ctx_width + r.out_width;
  ws.scale.resize(static_cast<std::size_t>(r.n * width));
  const auto slot = [&](std::int64_t i, std::int64_t j) -> std::uint32_t& {
    return j < r.ctx_width ? ws.counts[static_cast<std::size_t>(r.ctx[i * r.ctx_width + j])]
                           : ws.counts[static_cast<std::size_t>(vocab + r.outs[i * r.out_width + j - r.ctx_width])];
  };
  // A window's kNoWord slots (after its words[i] context rows) have no row: skipped.
  const auto used = [&](std::int64_t i, std::int64_t j) { return j >= r.ctx_width || j < r.words[i]; };
  for (std::int64_t i = 0; i < r.n; ++i)
    for (std::int64_t j = 0; j < width; ++j)
      if (used(i, j)) ++slot(i, j);
  for (std::int64_t i = 0; i < r.n; ++i)
    for (std::int64_t j = 0; j < width; ++j) {
      if (!used(i, j)) continue;
      float c = static_cast<float>(slot(i, j));
      if (extra)
        c += extra[j < r.ctx_width ? r.ctx[i * r.ctx_width + j] : vocab + r.outs[i * r.out_width + j - r.ctx_width]];
      ws.scale[static_cast<std::size_t>(i * width + j)] = duplicates == Duplicates::kSqrt ? 1.0f / std::sqrt(c)
                                                                                          : 1.0f / c;
    }
  for (std::int64_t i = 0; i < r.n; ++i)
    for (std::int64_t j = 0; j < width; ++j)
      if (used(i, j)) slot(i, j) = 0;
}

void mark_written(const Rows& r, std::int64_t vocab, bool* written) {
  for (std::int64_t i = 0; i < r.n * r.ctx_width; ++i)
    if (r.ctx[i] != kNoWord) written[r.ctx[i]] = true;
  for (std::int64_t i = 0; i < r.n * r.out_width; ++i) written[vocab + r.outs[i]] = true;
}

}  // namespace

template <typename Id> double neg_cbow_loss(const NegBatch<Id>& b) {
  Workspace& ws = workspace();
  const Rows r = rows_of(b, ws);
  return score(r, ws.h.data(), nullptr, nullptr, 0.0f);
}

template <typename Id>
double neg_cbow_step(const NegBatch<Id>& b, float lr, Duplicates duplicates, bool* written, const float* extra,
                     std::int64_t block) {
  Workspace& ws = workspace();
  const Rows r = rows_of(b, ws);
  ws.grad_h.resize(ws.h.size());
  ws.g.resize(static_cast<std::size_t>(r.n * r.out_width));
  const bool scaled = duplicates != Duplicates::kSum;
  const std::int64_t step = block > 0 ? block : std::max<std::int64_t>(r.n, 1);
  double loss = 0.0;
  for (std::int64_t first = 0; first < r.n; first += step) {
    Rows part = r;
    part.ctx += first * r.ctx_width;
    part.words += first;
    part.outs += first * r.out_width;
    part.n = std::min(step, r.n - first);
    float* h = ws.h.data() + first * r.dim;
    float* grad_h = ws.grad_h.data() + first * r.dim;
    float* g = ws.g.data() + first * r.out_width;
    const double part_loss = score(part, h, grad_h, g, lr);
    loss += part_loss;
    if (!std::isfinite(part_loss)) return part_loss;
    if (scaled) row_scales(part, b.vocab, duplicates, extra, ws);
    apply(part, b.table, h, grad_h, g, scaled ? ws.scale.data() : nullptr);
  }
  if (written) mark_written(r, b.vocab, written);
  return loss;
}

template double neg_cbow_loss(const NegBatch<std::int32_t>&);
template double neg_cbow_loss(const NegBatch<std::int64_t>&);
template double neg_cbow_step(const NegBatch<std::int32_t>&, float, Duplicates, bool*, const float*, std::int64_t);
template double neg_cbow_step(const NegBatch<std::int64_t>&, float, Duplicates, bool*, const float*, std::int64_t);

}  // namespace fedavg::kernels
