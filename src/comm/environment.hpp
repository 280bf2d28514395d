// Owns MPI's lifetime: MPI_Init_thread in the constructor, MPI_Finalize in the destructor. Lives on main()'s stack.
#pragma once

#include <string>

namespace fedavg::comm {

class Environment {
 public:
  // Requests MPI_THREAD_FUNNELED: only the main thread calls MPI (a rank's other threads, the checkpoint writer's
  // and the exchange's workers, never do); throws comm::Error if MPI cannot start. Sets UCX's
  // TCP segment sizes first unless the environment does (see environment.cpp), and keeps MPI_Finalize from
  // hanging over TCP (comm/ucx_finalize.hpp).
  Environment(int& argc, char**& argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  int world_rank() const { return rank_; }
  // The MPI library's own name and version (the first line of MPI_Get_library_version).
  static std::string library_version();
  int world_size() const { return size_; }

 private:
  int rank_ = -1;
  int size_ = 0;
};

}  // namespace fedavg::comm
