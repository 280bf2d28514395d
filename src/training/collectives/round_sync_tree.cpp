// RoundSync's tree algorithms (learner_tree.hpp): down_tree and weights, average_into_root.
#include "training/collectives/round_sync.hpp"

#include <cstdint>

namespace fedavg::training {

void RoundSync::weights(core::Floats w, bool from_root) {
  if (!(from_root && comm_.rank() == 0)) {
    std::vector<comm::Request> sends;
    pass_chunks(w.data(), w.size(), comm::Tag::Weights, tree_source(from_root), tree_.children(comm_.rank()), sends);
  }
  const int copies = comm_.size() - (from_root ? 2 : 1);
  weight_bytes_ += static_cast<double>(std::max(copies, 0)) * static_cast<double>(w.size() * sizeof(float));
}

int RoundSync::tree_source(bool from_root) const {
  const int me = comm_.rank();
  const bool receives = me != 0 && !(from_root && me == 1);
  return receives ? tree_.parent(me) : -1;
}

template <typename T> void RoundSync::down_tree(std::vector<T>& data, comm::Tag tag, bool resize, bool from_root) {
  if (from_root && comm_.rank() == 0) return;
  pass_down(data, tag, resize, tree_source(from_root), tree_.children(comm_.rank()));
}

template <typename T>
void RoundSync::pass_down(std::vector<T>& data, comm::Tag tag, bool resize, int parent,
                          const std::vector<int>& children) {
  std::vector<comm::Request> sends;
  // Messages of one pair and tag arrive in the order they were sent: with `resize`, the size comes first. (The
  // size outlives its send: pass_chunks waits for it.)
  std::int64_t size = static_cast<std::int64_t>(data.size());
  if (resize) {
    if (parent >= 0) {
      comm_.receive_into(await_member(parent, tag, deadline()), &size, 1);
      data.resize(static_cast<std::size_t>(size));
    }
    for (const int child : children)
      if (child < comm_.size()) sends.push_back(comm_.isend(&size, 1, child, tag));
  }
  pass_chunks(data.data(), data.size(), tag, parent, children, sends);
}

template <typename T>
void RoundSync::pass_chunks(T* data, std::size_t n, comm::Tag tag, int parent, const std::vector<int>& children,
                            std::vector<comm::Request>& sends) {
  const auto until = deadline();
  const std::size_t step = chunk<T>();
  for (std::size_t c = 0, count = chunks<T>(n); c < count; ++c) {
    const std::size_t offset = c * step, k = chunk_size<T>(offset, n);
    if (parent >= 0) comm_.receive_into(await_member(parent, tag, until), data + offset, k);
    for (const int child : children)
      if (child < comm_.size()) sends.push_back(comm_.isend(data + offset, k, child, tag));
  }
  for (auto& r : sends) r.wait_until(until, waits_.collective());
}

template void RoundSync::down_tree(std::vector<float>&, comm::Tag, bool, bool);
template void RoundSync::down_tree(std::vector<std::uint8_t>&, comm::Tag, bool, bool);
template void RoundSync::pass_chunks(float*, std::size_t, comm::Tag, int, const std::vector<int>&,
                                     std::vector<comm::Request>&);

void RoundSync::average_into_root(core::Floats w, float share) {
  const int me = comm_.rank();
  if (me != 0) {
    sum_up(w, share, tree_.children(me), tree_.parent(me));
  } else if (comm_.size() > 1) {
    // Learner 1's sums go straight into the Dispatcher's `w`.
    const auto until = deadline();
    const std::size_t step = chunk<float>();
    for (std::size_t c = 0, count = chunks<float>(w.size()); c < count; ++c) {
      const std::size_t offset = c * step;
      comm_.receive_into(await_member(1, comm::Tag::Average, until), w.data() + offset,
                         chunk_size<float>(offset, w.size()));
    }
    inbound_bytes_ += static_cast<double>(w.size() * sizeof(float));
  }
  weight_bytes_ += static_cast<double>(comm_.size() - 1) * static_cast<double>(w.size() * sizeof(float));
}

void RoundSync::sum_up(core::Floats w, float share, const std::vector<int>& children, int parent, comm::Tag up) {
  // Chunk by chunk: scale its own weights, add the children's sums and send the total to the parent.
  const std::size_t step = chunk<float>();
  incoming_.resize(children.size() * std::min(step, w.size()));
  std::vector<comm::Request> sends;
  const auto until = deadline();
  for (std::size_t c = 0, count = chunks<float>(w.size()); c < count; ++c) {
    const std::size_t offset = c * step, n = chunk_size<float>(offset, w.size());
    float* mine = w.data() + offset;
    for (std::size_t k = 0; k < children.size(); ++k)
      comm_.receive_into(await_member(children[k], comm::Tag::Average, until), incoming_.data() + k * n, n);
    const float* a = incoming_.data();
    if (children.empty()) {
      if (share != 1.0f)
        for (std::size_t i = 0; i < n; ++i) mine[i] *= share;
    } else if (children.size() == 1) {
      for (std::size_t i = 0; i < n; ++i) mine[i] = mine[i] * share + a[i];
    } else {
      const float* b = a + n;
      for (std::size_t i = 0; i < n; ++i) mine[i] = mine[i] * share + a[i] + b[i];
      for (std::size_t k = 2; k < children.size(); ++k) {  // a host's lowest learner: the other hosts' sums
        const float* x = a + k * n;
        for (std::size_t i = 0; i < n; ++i) mine[i] += x[i];
      }
    }
    if (parent >= 0) sends.push_back(comm_.isend(mine, n, parent, up));
  }
  for (auto& r : sends) r.wait_until(until, waits_.collective());
}

}  // namespace fedavg::training
