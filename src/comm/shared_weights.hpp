// The weights that hogwild's learners and the Dispatcher share: one float array in MPI-3 shared memory
// (MPI_Win_allocate_shared), mapped by every member of a communicator on one node, after a counter per learner
// of the windows it has trained and a count of the batches claimed. Learners' models are built over the array and
// update it in place without locks (docs/strategies.md#hogwild); a host's learners that share a lock-step round's
// batches claim them one by one (training::HostShare).
#pragma once

#include <cstddef>
#include <cstdint>

#include "comm/communicator.hpp"
#include "comm/shared_segment.hpp"
#include "comm/wait.hpp"

namespace fedavg::comm {

class SharedWeights {
 public:
  // Collective over `comm`: its rank 0 allocates `n` floats and comm.size() - 1 counters (zeros), every member
  // maps them (`n` matters on rank 0 only). Waits for the other members with a polled barrier first (the
  // allocation itself blocks and spins), so a member still importing torch costs the others no CPU. Throws
  // core::InputError when the members are not all on one node. Returns once every member sees the zeroed
  // counters and weights.
  SharedWeights(const Communicator& comm, std::size_t n, const Deadline& deadline);
  SharedWeights(const SharedWeights&) = delete;
  SharedWeights& operator=(const SharedWeights&) = delete;
  // Frees the window unless an exception is unwinding (the job is being aborted, and MPI_Win_free is collective).
  ~SharedWeights() = default;

  float* data() const { return base_; }
  std::size_t size() const { return n_; }
  // Windows trained so far by member i + 1 (a learner): only that member adds to it.
  void add_trained(int learner, std::int64_t windows) const;
  // The sum of the counters.
  std::int64_t trained() const;
  // Claims one batch: adds one to the members' count of claimed batches if it is below `limit` and returns the
  // batch's place in that count (from 0); else leaves it and returns -1. The count only grows, so a limit is a
  // running total.
  std::int64_t claim(std::int64_t limit) const;
  // Memory barrier for the shared array (MPI_Win_sync): after writing it before telling others, and after
  // being told before reading it.
  void sync() const { segment_.sync(); }
  // Collective end of use: a polled barrier (a member may still be training), then the free.
  void release(const Deadline& deadline) { segment_.release(deadline); }

 private:
  SharedSegment segment_;
  std::int64_t* counters_ = nullptr;  // one per learner, then the claimed batches
  int learners_ = 0;
  float* base_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace fedavg::comm
