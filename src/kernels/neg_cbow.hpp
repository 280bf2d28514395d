// The fused step of the "neg" model (CBOW with negative sampling, python/runtime/fused_neg.py): one pass over a
// batch's rows to score it, one to apply the step. Plain C++ on the weight buffer; src/kernels/module.cpp exposes it
// to Python as the module fedavg_kernels.
#pragma once

#include <cstdint>

namespace fedavg::kernels {

// How a step scales the change of a row that occurs c times in a batch: by 1, 1/sqrt(c) or 1/c.
enum class Duplicates { kSum, kSqrt, kMean };

// A batch of windows on a [2V, D] float32 table: the V input vectors (the embeddings), then the V output vectors.
// Ids is int32 or int64, [n, 2*window+1], the target in the middle; noise is [n, negatives]. Every id must be in
// [0, V), but for kNoWord in context slots (a window a line's end cut short: edge_windows), which the window's
// context mean leaves out; a window needs one context word. The kernels throw std::out_of_range naming the first id
// that breaks this, before they write anything.
inline constexpr std::int64_t kNoWord = -1;

template <typename Id> struct NegBatch {
  float* table;
  std::int64_t vocab;
  std::int64_t dim;
  const Id* ids;
  const std::int64_t* noise;
  std::int64_t windows;
  std::int64_t window;
  std::int64_t negatives;
};

// The summed loss of the batch's windows: sum over windows of softplus(-u_t.h) + sum over noise words n != t of
// softplus(u_n.h), h the mean of the context's input vectors (those of its words: kNoWord slots left out). Writes
// nothing.
template <typename Id> double neg_cbow_loss(const NegBatch<Id>& b);

// One SGD step of rate lr on the batch, every gradient taken at the weights before the step (a minibatch step, the
// same as the hand-written torch step); returns the batch's summed loss, as neg_cbow_loss. If that is not finite,
// nothing is written. written, when not null, is a [2V] flag per row of the table: each row the step wrote is set.
// block > 0 splits the batch into steps of `block` windows, in order, each taken at the weights the one before
// left (1: word2vec's order; duplicates then count within a block); a block whose loss is not finite is not
// written, and the blocks before it stay written. extra, when not null, is a [2V] count per row of the table added
// to its occurrences in a step before the kSqrt or kMean scaling: the occurrences that other learners, training
// the same table at once, are expected to add to the step.
template <typename Id>
double neg_cbow_step(const NegBatch<Id>& b, float lr, Duplicates duplicates, bool* written,
                     const float* extra = nullptr, std::int64_t block = 0);

}  // namespace fedavg::kernels
