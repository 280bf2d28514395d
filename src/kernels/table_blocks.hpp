// The building blocks of the autograd models (python/blocks.py) on a Table's rows in place: the mean of rows, the
// negative-sampling loss with its gradients, and the SGD step that adds row-sparse gradients into a table.
// src/kernels/module.cpp exposes them to Python (fedavg_kernels.rows_sum, negative_sampling, sgd_rows).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/neg_cbow.hpp"

namespace fedavg::kernels {

// A float32 table of `rows` rows of `dim` values, row-major. Every id a kernel reads must be in [0, rows); the
// kernels throw std::out_of_range naming the first that is not, before they write anything.
struct TableRef {
  float* data;
  std::int64_t rows;
  std::int64_t dim;
};

// out[i] = scale * (sum of the rows ids[i * m + j], j < m), for i < n; out is [n, dim].
void rows_sum(const TableRef& t, const std::int64_t* ids, std::int64_t n, std::int64_t m, float scale, float* out);

// word2vec's negative-sampling loss of n windows, summed: for window i with hidden vector h[i] ([n, dim]), target
// word target[i] and noise words noise[i * k + j], softplus(-u_t.h) + sum over noise words n != t of softplus(u_n.h),
// u the table's rows. With g_target [n], g_noise [n, k] and grad_h [n, dim] (all three or none): grad_scale times the
// derivatives of each window's loss by its scores u.h (0 for a noise word equal to the target, which is skipped), and
// grad_h[i] = sum of those times the rows, the derivative by h[i] (grad_scale 1/n: those of the mean loss). Reads the
// table only.
double negative_sampling(const TableRef& t, const float* h, const std::int64_t* target, const std::int64_t* noise,
                         std::int64_t n, std::int64_t k, float grad_scale, float* g_target, float* g_noise,
                         float* grad_h);

// A row-sparse gradient of a table: row ids[i * m + j] gets alpha * coef[i * m + j] * vecs[i] ([n, dim]), for i < n,
// j < m; coef null means 1.
struct RowGrad {
  const std::int64_t* ids;
  const float* coef;
  const float* vecs;
  std::int64_t n;
  std::int64_t m;
  float alpha;
};

// One SGD step in place: each row r the gradients name gets step * factor(c_r) times the sum of its gradients,
// c_r the times r occurs in all of them, factor 1, 1/sqrt(c) or 1/c (duplicates); step is -lr (or lr to maximise).
// written, when not null, is a flag per row of the table: each row named is set. Checks every id first.
void sgd_rows(const TableRef& t, const std::vector<RowGrad>& grads, float step, Duplicates duplicates, bool* written);

}  // namespace fedavg::kernels
