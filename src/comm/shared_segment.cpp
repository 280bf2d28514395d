#include "comm/shared_segment.hpp"

#include <algorithm>
#include <exception>

#include "comm/error.hpp"
#include "core/error.hpp"

namespace fedavg::comm {

SharedSegment::SharedSegment(const Communicator& comm, std::size_t bytes, const Deadline& deadline,
                             const std::string& members)
    : comm_(comm) {
  comm.ibarrier().wait_until(deadline);
  int node_size = 0;
  {
    MPI_Comm node = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(comm.comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
  }
  if (node_size != comm.size())
    throw core::InputError(members + " must run on one node (this rank's node has " + std::to_string(node_size) +
                           " of them)");
  void* mine = nullptr;
  check_mpi(MPI_Win_allocate_shared(static_cast<MPI_Aint>(comm.rank() == 0 ? bytes : 0), 1, MPI_INFO_NULL, comm.comm_,
                                    &mine, &win_),
            "MPI_Win_allocate_shared of " + std::to_string(bytes) + " bytes");
  MPI_Aint size = 0;
  int unit = 0;
  void* root = nullptr;
  check_mpi(MPI_Win_shared_query(win_, 0, &size, &unit, &root), "MPI_Win_shared_query");
  base_ = static_cast<char*>(root);
  size_ = static_cast<std::size_t>(size);
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
  if (comm.rank() == 0) std::fill(base_, base_ + size_, char{0});
  // No member may read or write before the zeros are in place.
  sync();
  comm.ibarrier().wait_until(deadline);
  sync();
}

SharedSegment::~SharedSegment() {
  if (std::uncaught_exceptions() == 0) free_window();
}

void SharedSegment::sync() const { check_mpi(MPI_Win_sync(win_), "MPI_Win_sync"); }

void SharedSegment::release(const Deadline& deadline) {
  if (win_ == MPI_WIN_NULL) return;
  comm_.ibarrier().wait_until(deadline);
  free_window();
}

void SharedSegment::free_window() noexcept {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  base_ = nullptr;
}

}  // namespace fedavg::comm
