#include "comm/shared_weights.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "comm/error.hpp"
#include "core/error.hpp"

namespace fedavg::comm {

SharedWeights::SharedWeights(const Communicator& comm, std::size_t n, const Deadline& deadline) : comm_(comm) {
  comm.ibarrier().wait_until(deadline);
  int node_size = 0;
  {
    MPI_Comm node = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(comm.comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
  }
  if (node_size != comm.size())
    throw core::InputError("strategy hogwild shares the weights in memory: the Dispatcher and all " +
                           std::to_string(comm.size() - 1) + " learners must run on one node (this rank's node has " +
                           std::to_string(node_size) + " of them)");
  learners_ = comm.size() - 1;
  // The counters, then the weights from the next page: rows that straddle an extra cache line slow training.
  constexpr std::size_t kPage = 4096;
  const std::size_t counters = static_cast<std::size_t>(learners_) + 1;
  const std::size_t head = (counters * sizeof(std::int64_t) + kPage - 1) / kPage * kPage;
  const std::size_t bytes = head + n * sizeof(float);
  void* mine = nullptr;
  check_mpi(MPI_Win_allocate_shared(static_cast<MPI_Aint>(comm.rank() == 0 ? bytes : 0), 1, MPI_INFO_NULL, comm.comm_,
                                    &mine, &win_),
            "MPI_Win_allocate_shared of " + std::to_string(bytes) + " bytes");
  MPI_Aint size = 0;
  int unit = 0;
  void* root = nullptr;
  check_mpi(MPI_Win_shared_query(win_, 0, &size, &unit, &root), "MPI_Win_shared_query");
  counters_ = static_cast<std::int64_t*>(root);
  base_ = reinterpret_cast<float*>(static_cast<char*>(root) + head);
  n_ = (static_cast<std::size_t>(size) - head) / sizeof(float);
  // A passive-target epoch for the whole run, so that MPI_Win_sync may order the loads and stores.
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
  if (comm.rank() == 0) {
    std::fill(counters_, counters_ + counters, std::int64_t{0});
    std::fill(base_, base_ + n_, 0.0f);
  }
  // No member may claim, count or write before the zeros are in place.
  sync();
  comm.ibarrier().wait_until(deadline);
  sync();
}

SharedWeights::~SharedWeights() {
  if (std::uncaught_exceptions() == 0) free_window();
}

void SharedWeights::add_trained(int learner, std::int64_t windows) const {
  std::int64_t* c = counters_ + learner;
  __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + windows, __ATOMIC_RELEASE);
}

std::int64_t SharedWeights::trained() const {
  std::int64_t sum = 0;
  for (int i = 0; i < learners_; ++i) sum += __atomic_load_n(counters_ + i, __ATOMIC_ACQUIRE);
  return sum;
}

std::int64_t SharedWeights::claim(std::int64_t limit) const {
  std::int64_t* claimed = counters_ + learners_;
  std::int64_t now = __atomic_load_n(claimed, __ATOMIC_RELAXED);
  while (now < limit)
    if (__atomic_compare_exchange_n(claimed, &now, now + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return now;
  return -1;
}

void SharedWeights::sync() const { check_mpi(MPI_Win_sync(win_), "MPI_Win_sync"); }

void SharedWeights::release(const Deadline& deadline) {
  if (win_ == MPI_WIN_NULL) return;
  comm_.ibarrier().wait_until(deadline);
  free_window();
}

void SharedWeights::free_window() noexcept {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  base_ = nullptr;
}

}  // namespace fedavg::comm
