// Which learner of the sparse exchange sums which rows: row r of every table belongs to owner r mod n,
// interleaved, so each owner gets its share of the frequent words at the top of a vocabulary. An owner's rows of
// every table, in order, make up its block, the layout of the rounding residual it keeps for them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "training/exchange/sparse_delta.hpp"

namespace fedavg::training {

class RowOwners {
 public:
  // `owners` owners (at least 1); the block is owner `index`'s (0-based).
  RowOwners(const Layout& layout, int owners, int index)
      : n_(static_cast<std::uint32_t>(owners)), k_(static_cast<std::uint32_t>(index)) {
    for (const Table& t : layout) {
      base_.push_back(block_size_);
      cols_.push_back(t.cols);
      const std::size_t mine = t.rows > k_ ? (t.rows - k_ + n_ - 1) / n_ : 0;
      block_size_ += mine * t.cols;
    }
  }

  std::size_t owners() const { return n_; }
  // The block's first row of every table; the next are `owners()` apart.
  std::uint32_t first_row() const { return k_; }
  // The owner (0-based) of a row.
  std::size_t owner_of(std::uint32_t row) const { return row % n_; }
  // Where a row this block owns starts in the block.
  std::size_t in_block(std::size_t table, std::uint32_t row) const {
    return base_[table] + static_cast<std::size_t>(row / n_) * cols_[table];
  }
  // Floats in the block.
  std::size_t block_size() const { return block_size_; }

 private:
  std::uint32_t n_;
  std::uint32_t k_;
  std::vector<std::size_t> base_;
  std::vector<std::size_t> cols_;
  std::size_t block_size_ = 0;
};

}  // namespace fedavg::training
