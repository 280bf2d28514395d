#include "core/workers.hpp"

#include <sched.h>

#include <algorithm>

namespace fedavg::core {
namespace {

// Piece `i` of `pieces` over [0, n): as even as it can be, the first pieces one item longer.
std::pair<std::size_t, std::size_t> piece(std::size_t i, std::size_t pieces, std::size_t n) {
  const std::size_t base = n / pieces, extra = n % pieces;
  const std::size_t begin = i * base + std::min(i, extra);
  return {begin, begin + base + (i < extra ? 1 : 0)};
}

}  // namespace

Workers::Workers(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i) pool_.emplace_back([this, i] { serve(i - 1); });
}

Workers::~Workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : pool_) t.join();
}

void Workers::for_range(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn) {
  if (n == 0) return;
  const std::size_t most = std::max<std::size_t>(1, n / std::max<std::size_t>(grain, 1));
  const std::size_t pieces = std::min<std::size_t>(threads(), most);
  if (pieces == 1) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    pieces_ = pieces;
    pending_ = pieces - 1;
    error_ = nullptr;
    ++loop_;
  }
  wake_.notify_all();
  std::exception_ptr mine;
  try {
    const auto [begin, end] = piece(0, pieces, n);
    fn(begin, end);
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  fn_ = nullptr;
  if (mine) std::rethrow_exception(mine);
  if (error_) std::rethrow_exception(error_);
}

void Workers::serve(std::size_t index) {
  unsigned long seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || loop_ != seen; });
    if (stop_) return;
    seen = loop_;
    if (index + 1 >= pieces_) continue;  // a loop of fewer pieces: nothing for this thread
    const auto [begin, end] = piece(index + 1, pieces_, n_);
    const auto* fn = fn_;
    lock.unlock();
    std::exception_ptr error;
    try {
      (*fn)(begin, end);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !error_) error_ = error;
    if (--pending_ == 0) done_.notify_one();
  }
}

unsigned share_of_cores(unsigned sharers) {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cores = sched_getaffinity(0, sizeof(set), &set) == 0
                        ? CPU_COUNT(&set)
                        : static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1u, static_cast<unsigned>(std::max(cores, 1)) / std::max(sharers, 1u));
}

}  // namespace fedavg::core
