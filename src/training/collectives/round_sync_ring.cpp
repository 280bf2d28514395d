// RoundSync's ring algorithm (learner_ring.hpp): allreduce_in_place.
#include "training/collectives/round_sync.hpp"

namespace fedavg::training {

void RoundSync::allreduce_in_place(core::Floats w) {
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
    std::vector<comm::Request> sends;
    pass_chunks(w.data(), w.size(), comm::Tag::Weights, in_ring ? -1 : tree_.parent(me), local, sends);
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

void RoundSync::ring_allreduce(core::Floats w, std::vector<comm::Request>& gather) {
  if (comm_.rank() == 0) {
    gather_segments(w);
  } else if (ring_.learners() > 1) {  // a ring of one sends the Dispatcher its sum as it adds it (sum_up)
    const auto until = deadline();
    reduce_scatter(w, gather, until);
    allgather(w, gather, until);
  }
}

void RoundSync::gather_segments(core::Floats w) {
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

void RoundSync::reduce_scatter(core::Floats w, std::vector<comm::Request>& gather, const comm::Deadline& until) {
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

void RoundSync::allgather(core::Floats w, std::vector<comm::Request>& gather, const comm::Deadline& until) {
  const int me = comm_.rank(), learners = ring_.learners();
  for (int k = 0; k + 1 < learners; ++k)
    each_chunk(ring_.segment(me, k + learners - 1), w.size(), [&](std::size_t at, std::size_t count) {
      comm_.receive_into(await_member(ring_.previous(me), comm::Tag::Allgather, until), w.data() + at, count);
      if (k + 2 < learners) gather.push_back(comm_.isend(w.data() + at, count, ring_.next(me), comm::Tag::Allgather));
    });
}

}  // namespace fedavg::training
