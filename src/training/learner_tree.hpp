// The binary tree along which learners sum what they send the Dispatcher, so it receives one message a round
// however many learners there are, and along which the Dispatcher's weights (or global delta) come back down.
// Ranks are the learner communicator's: the Dispatcher is 0 and the root's parent; learner rank r (1..L) has
// children 2r and 2r+1.
#pragma once

#include <vector>

namespace fedavg::training {

inline int tree_parent(int rank) { return rank / 2; }

inline std::vector<int> tree_children(int rank, int size) {
  std::vector<int> out;
  for (int c = 2 * rank; c <= 2 * rank + 1; ++c)
    if (rank > 0 && c < size) out.push_back(c);
  return out;
}

}  // namespace fedavg::training
