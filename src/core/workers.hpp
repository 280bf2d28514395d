// Threads that share one loop's work: a range of items cut into contiguous pieces, one piece per thread, the
// calling thread taking the first. For memory-bound loops over rows of the weights (the sparse exchange), where a
// rank that waits for nothing else can use the cores its host leaves free during the exchange.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fedavg::core {

class Workers {
 public:
  // `threads` in all, the caller's included: 1 starts none and runs every loop on the caller.
  explicit Workers(unsigned threads = 1);
  ~Workers();  // stops and joins the threads
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  unsigned threads() const { return static_cast<unsigned>(pool_.size()) + 1; }
  // Calls fn(begin, end) for contiguous pieces that cover [0, n), each at least `grain` items long (one piece when
  // n < 2 * grain), at most one per thread; returns once every piece is done. Pieces run at the same time, so fn
  // must only write what its own items own. An exception from any piece is rethrown here (the first one). One
  // thread at a time calls it, and fn must not call it again.
  void for_range(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn);

 private:
  void serve(std::size_t index);  // a pool thread: runs piece index + 1 of each loop

  std::vector<std::thread> pool_;
  std::mutex mutex_;
  std::condition_variable wake_;  // a new loop, or stop
  std::condition_variable done_;  // a piece finished
  const std::function<void(std::size_t, std::size_t)>* fn_ = nullptr;
  std::size_t n_ = 0;
  std::size_t pieces_ = 0;    // of the loop in progress
  std::size_t pending_ = 0;   // pool pieces of it not yet finished
  unsigned long loop_ = 0;    // counts loops, so each thread runs each loop once
  std::exception_ptr error_;  // the first a pool piece threw
  bool stop_ = false;
};

// The threads a rank's share of its host's cores comes to: the cores this process may run on (its CPU affinity),
// divided by `sharers` (the ranks of the host that work at the same time), at least 1.
unsigned share_of_cores(unsigned sharers);

}  // namespace fedavg::core
