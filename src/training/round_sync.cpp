#include "training/round_sync.hpp"

#include <array>
#include <cstdint>

namespace fedavg::training {

comm::Deadline RoundSync::deadline() const {
  // Learners wait in collectives only because some member is late: that member is named elsewhere first.
  return comm::Deadline::after(liveness_ * (comm_.rank() == 0 ? comm::kDirect : comm::kIndirect));
}

void RoundSync::weights(std::vector<float>& w, bool from_root) {
  down_tree(w, comm::Tag::Weights, false, from_root);
  const int copies = comm_.size() - (from_root ? 2 : 1);
  weight_bytes_ += static_cast<double>(std::max(copies, 0)) * static_cast<double>(w.size() * sizeof(float));
}

template <typename T> void RoundSync::down_tree(std::vector<T>& data, comm::Tag tag, bool resize, bool from_root) {
  const int me = comm_.rank();
  if (from_root && me == 0) return;
  const bool receives = me != 0 && !(from_root && me == 1);
  pass_down(data, tag, resize, receives ? tree_.parent(me) : -1, tree_.children(me));
}

template <typename T>
void RoundSync::pass_down(std::vector<T>& data, comm::Tag tag, bool resize, int parent,
                          const std::vector<int>& children) {
  const auto until = deadline();
  std::vector<comm::Request> sends;
  const auto pass_on = [&](const auto* chunk, std::size_t n) {
    for (const int child : children)
      if (child < comm_.size()) sends.push_back(comm_.isend(chunk, n, child, tag));
  };
  // Messages of one pair and tag arrive in the order they were sent: with `resize`, the size comes first.
  std::int64_t size = static_cast<std::int64_t>(data.size());
  if (resize) {
    if (parent >= 0) {
      comm_.receive_into(await_member(parent, tag, until), &size, 1);
      data.resize(static_cast<std::size_t>(size));
    }
    pass_on(&size, 1);
  }
  const std::size_t step = chunk<T>();
  for (std::size_t c = 0, count = chunks<T>(data.size()); c < count; ++c) {
    const std::size_t offset = c * step, n = chunk_size<T>(offset, data.size());
    if (parent >= 0) comm_.receive_into(await_member(parent, tag, until), data.data() + offset, n);
    pass_on(data.data() + offset, n);
  }
  for (auto& r : sends) r.wait_until(until, waits_.collective());
}

template void RoundSync::down_tree(std::vector<float>&, comm::Tag, bool, bool);
template void RoundSync::down_tree(std::vector<std::uint8_t>&, comm::Tag, bool, bool);

comm::WindowTotals RoundSync::totals(const comm::WindowTotals& mine) {
  const auto in = mine.encode();
  std::vector<double> sum(in.size());
  comm_.iallreduce_sum(in.data(), sum.data(), in.size()).wait_until(deadline(), waits_.collective());
  return comm::WindowTotals::decode(sum);
}

void RoundSync::average_into_root(std::vector<float>& w, float share) {
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

void RoundSync::sum_up(std::vector<float>& w, float share, const std::vector<int>& children, int parent, comm::Tag up) {
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

comm::Arrival RoundSync::await_member(int rank, comm::Tag tag, const comm::Deadline& until) const {
  return comm_.await_message(rank, tag, until, who(rank), waits_.collective());
}

std::string RoundSync::who(int rank) const {
  if (rank == 0) return "the global weights from the Dispatcher";
  const auto world = rank >= 1 && static_cast<std::size_t>(rank) <= learner_ranks_.size()
                         ? learner_ranks_[static_cast<std::size_t>(rank - 1)]
                         : -1;
  return "the weights of learner rank " + (world >= 0 ? std::to_string(world) : "?");
}

void RoundSync::allreduce_in_place(std::vector<float>& w) {
  const int me = comm_.rank();
  std::vector<comm::Request> gather;
  if (me == 0) {
    ring_allreduce(w, gather);
  } else {
    // Across hosts, each host's learners sum on their host first, to its lowest learner, which is in the ring;
    // on one host every learner is in it.
    const bool in_ring = ring_.holds(me), every = ring_.learners() == comm_.size() - 1;
    static const std::vector<int> none;
    const std::vector<int>& local = every ? none : tree_.local_children(me);
    if (in_ring) {
      // A ring of one learner sends the Dispatcher each chunk of the sum as soon as it has it.
      sum_up(w, 1.0f, local, ring_.learners() == 1 ? 0 : -1, comm::Tag::Allgather);
      if (ring_.learners() > 1) ring_allreduce(w, gather);
    } else {
      sum_up(w, 1.0f, local, tree_.parent(me));
    }
    // Each lowest learner passes the sum on down its host's part of the tree, while the ring's last sends leave.
    pass_down(w, comm::Tag::Weights, false, in_ring ? -1 : tree_.parent(me), local);
    for (auto& r : gather) r.wait_until(deadline(), waits_.collective());
  }
  const auto n = static_cast<double>(w.size() * sizeof(float));
  if (me == 0 && comm_.size() > 1) inbound_bytes_ += n;
  weight_bytes_ += std::max(2.0 * (comm_.size() - 1) - 1.0, 0.0) * n;
}

template <typename F> void RoundSync::each_chunk(int s, std::size_t n, const F& f) const {
  const std::size_t begin = ring_.segment_begin(s, n), end = ring_.segment_begin(s + 1, n), step = chunk<float>();
  for (std::size_t c = 0, k = chunks<float>(end - begin); c < k; ++c) {
    const std::size_t offset = begin + c * step;
    f(offset, chunk_size<float>(offset, end));
  }
}

void RoundSync::ring_allreduce(std::vector<float>& w, std::vector<comm::Request>& gather) {
  if (comm_.rank() == 0) {
    gather_segments(w);
  } else if (ring_.learners() > 1) {  // a ring of one sends the Dispatcher its sum as it adds it (sum_up)
    const auto until = deadline();
    reduce_scatter(w, gather, until);
    allgather(w, gather, until);
  }
}

void RoundSync::gather_segments(std::vector<float>& w) {
  // A chunk at a time from whichever learner has one in: the learners send them at once, and taking one
  // learner's whole segment before the next would leave the others' links idle (a message travels only once its
  // receiver takes it).
  struct Segment {
    int s;
    std::size_t next;    // where its next chunk goes
    std::size_t end;     // where it ends
    std::size_t chunks;  // still to come
  };
  const std::size_t n = w.size();
  std::vector<Segment> missing;
  for (int s = 0; s < ring_.learners(); ++s) {
    const std::size_t begin = ring_.segment_begin(s, n), end = ring_.segment_begin(s + 1, n);
    missing.push_back({s, begin, end, chunks<float>(end - begin)});
  }
  comm::IdleWatch watch(liveness_, waits_.collective());
  while (!missing.empty()) {
    bool progress = false;
    for (auto it = missing.begin(); it != missing.end();) {
      const auto arrival = comm_.probe(ring_.completer(it->s), comm::Tag::Allgather);
      if (!arrival) {
        ++it;
        continue;
      }
      comm_.receive_into(*arrival, w.data() + it->next, chunk_size<float>(it->next, it->end));
      progress = true;
      it->next += chunk<float>();
      it = --it->chunks == 0 ? missing.erase(it) : it + 1;
    }
    watch.end_pass(
        progress, [&] { return who(ring_.completer(missing.front().s)); }, comm::kDirect);
  }
}

void RoundSync::reduce_scatter(std::vector<float>& w, std::vector<comm::Request>& gather, const comm::Deadline& until) {
  const int me = comm_.rank(), learners = ring_.learners(), next = ring_.next(me);
  const std::size_t n = w.size();
  incoming_.resize(std::min(chunk<float>(), n));
  std::vector<comm::Request> scatter;
  // A member sends its own segment, then for H - 1 steps adds the partial sum of the next segment that comes in
  // and sends each chunk on as soon as it is added; the last segment it adds is whole, and each of its chunks
  // goes round the ring and to the Dispatcher.
  each_chunk(ring_.segment(me, -1), n, [&](std::size_t at, std::size_t count) {
    scatter.push_back(comm_.isend(w.data() + at, count, next, comm::Tag::ReduceScatter));
  });
  for (int k = 0; k + 1 < learners; ++k)
    each_chunk(ring_.segment(me, k), n, [&](std::size_t at, std::size_t count) {
      comm_.receive_into(await_member(ring_.previous(me), comm::Tag::ReduceScatter, until), incoming_.data(), count);
      float* mine = w.data() + at;
      for (std::size_t i = 0; i < count; ++i) mine[i] += incoming_[i];
      if (k + 2 < learners) {
        scatter.push_back(comm_.isend(mine, count, next, comm::Tag::ReduceScatter));
      } else {
        gather.push_back(comm_.isend(mine, count, next, comm::Tag::Allgather));
        gather.push_back(comm_.isend(mine, count, 0, comm::Tag::Allgather));
      }
    });
  // The allgather overwrites the segments the reduce-scatter sent from.
  for (auto& r : scatter) r.wait_until(until, waits_.collective());
}

void RoundSync::allgather(std::vector<float>& w, std::vector<comm::Request>& gather, const comm::Deadline& until) {
  const int me = comm_.rank(), learners = ring_.learners();
  for (int k = 0; k + 1 < learners; ++k)
    each_chunk(ring_.segment(me, k + learners - 1), w.size(), [&](std::size_t at, std::size_t count) {
      comm_.receive_into(await_member(ring_.previous(me), comm::Tag::Allgather, until), w.data() + at, count);
      if (k + 2 < learners) gather.push_back(comm_.isend(w.data() + at, count, ring_.next(me), comm::Tag::Allgather));
    });
}

bool RoundSync::same_everywhere(double value) {
  // The largest of {v, -v} over the members is {max, -min}: the values agree if max == min.
  const std::array<double, 2> mine{value, -value};
  std::array<double, 2> range{};
  comm_.iallreduce_max(mine.data(), range.data(), mine.size()).wait_until(deadline(), waits_.collective());
  return range[0] == -range[1];
}

}  // namespace fedavg::training
