// One block of MPI-3 shared memory (MPI_Win_allocate_shared) that every member of a communicator on one node
// maps: rank 0 allocates it, zeroed, and a passive-target epoch (MPI_Win_lock_all) lasts its whole life, so that
// sync() may order the members' loads and stores. What lives in it is its owner's: SharedWeights, SharedRowMarks.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

#include "comm/communicator.hpp"
#include "comm/wait.hpp"

namespace fedavg::comm {

class SharedSegment {
 public:
  // Collective over `comm`: rank 0 allocates `bytes` (they matter on rank 0 only) and every member maps them.
  // Waits for the other members with a polled barrier first (the allocation itself blocks and spins), so a member
  // still starting costs the others no CPU. Throws core::InputError "`members` must run on one node ..." when the
  // members are not all on one node. Returns once every member sees the zeros.
  SharedSegment(const Communicator& comm, std::size_t bytes, const Deadline& deadline, const std::string& members);
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  // Frees the window unless an exception is unwinding (the job is being aborted, and MPI_Win_free is collective).
  ~SharedSegment();

  char* data() const { return base_; }
  std::size_t size() const { return size_; }
  // Memory barrier for the segment (MPI_Win_sync): after writing it before telling others, and after being told
  // before reading it.
  void sync() const;
  // Collective end of use: a polled barrier (a member may still be using it), then the free.
  void release(const Deadline& deadline);

 private:
  void free_window() noexcept;

  const Communicator& comm_;
  MPI_Win win_ = MPI_WIN_NULL;
  char* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace fedavg::comm
