// The walk that merges two ascending lists of row indices, the one step that adding two sparse deltas (and
// finding a round's changed rows) shares: each row once, in ascending order, told whether one list or both hold it.
#pragma once

#include <cstddef>

namespace fedavg::training {

// Walks `left` and `right` (each ascending, without repeats; anything with size() and operator[]) in merged
// order, calling only_left(i) for a row only left[i] holds, only_right(j) for one only right[j] holds and
// both(i, j) for one both hold.
template <typename Left, typename Right, typename OnlyLeft, typename OnlyRight, typename Both>
void merge_rows(const Left& left, const Right& right, OnlyLeft&& only_left, OnlyRight&& only_right, Both&& both) {
  std::size_t i = 0, j = 0;
  while (i < left.size() || j < right.size()) {
    if (j == right.size() || (i < left.size() && left[i] < right[j])) {
      only_left(i++);
    } else if (i == left.size() || right[j] < left[i]) {
      only_right(j++);
    } else {
      both(i++, j++);
    }
  }
}

}  // namespace fedavg::training
