#include "comm/ucx_finalize.hpp"

#include <dlfcn.h>
#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#define FEDAVG_EXPORT __attribute__((visibility("default")))

namespace fedavg::comm {
namespace {

// Process-wide by nature: MPICH calls the entry points below from C, with no object to hang state on.
struct Finalizing {
  std::recursive_mutex ucx;         // held by every UCX call while the thread runs
  std::atomic<bool> active{false};  // from the first endpoint close
  std::atomic<bool> stop{false};
  std::vector<ucp_worker_h> workers;  // MPICH's, as created
  std::thread progress;
};

Finalizing& state() {
  static Finalizing s;
  return s;
}

// UCX's own definition of `name` (the next one after the program's).
template <typename F> F next(const char* name) { return reinterpret_cast<F>(dlsym(RTLD_NEXT, name)); }

#define FEDAVG_REAL(fn) static const auto real = ::fedavg::comm::next<decltype(&::fn)>(#fn)

// Holds the UCX lock while the progress thread may run.
class Serialised {
 public:
  Serialised() : held_(state().active.load()) {
    if (held_) state().ucx.lock();
  }
  ~Serialised() {
    if (held_) state().ucx.unlock();
  }
  Serialised(const Serialised&) = delete;
  Serialised& operator=(const Serialised&) = delete;

 private:
  bool held_;
};

void progress_until_stopped() {
  FEDAVG_REAL(ucp_worker_progress);
  auto& s = state();
  while (!s.stop.load()) {
    {
      std::lock_guard<std::recursive_mutex> hold(s.ucx);
      for (ucp_worker_h w : s.workers) real(w);
    }
    // Short sleeps: this runs only while MPI finalizes, and the peers' closes wait on it.
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void start_progress() {
  auto& s = state();
  std::lock_guard<std::recursive_mutex> hold(s.ucx);
  if (s.active.exchange(true)) return;
  s.progress = std::thread(progress_until_stopped);
}

void stop_progress() {
  auto& s = state();
  if (!s.active.load()) return;
  s.stop.store(true);
  if (s.progress.joinable()) s.progress.join();
  s.active.store(false);
  s.stop.store(false);
}

}  // namespace

bool ucx_finalize_progress_linked() {
  // Our definition is the one the dynamic linker binds MPICH to only if the executable exports it.
  return dlsym(RTLD_DEFAULT, "ucp_disconnect_nb") == reinterpret_cast<void*>(&::ucp_disconnect_nb) &&
         next<void*>("ucp_disconnect_nb") != nullptr;
}

}  // namespace fedavg::comm

using fedavg::comm::Serialised;

// An entry point that only runs UCX's own `fn` with the UCX lock held: `params` are its parameters, `args` their
// names, each in parentheses.
#define FEDAVG_SERIALISED(ret, fn, params, args) \
  FEDAVG_EXPORT ret fn params {                  \
    FEDAVG_REAL(fn);                             \
    Serialised s;                                \
    return real args;                            \
  }

extern "C" {

FEDAVG_EXPORT ucs_status_t ucp_worker_create(ucp_context_h context, const ucp_worker_params_t* params,
                                             ucp_worker_h* worker_p) {
  FEDAVG_REAL(ucp_worker_create);
  const ucs_status_t status = real(context, params, worker_p);
  if (status == UCS_OK) {
    std::lock_guard<std::recursive_mutex> hold(fedavg::comm::state().ucx);
    fedavg::comm::state().workers.push_back(*worker_p);
  }
  return status;
}

FEDAVG_EXPORT void ucp_worker_destroy(ucp_worker_h worker) {
  FEDAVG_REAL(ucp_worker_destroy);
  fedavg::comm::stop_progress();
  {
    std::lock_guard<std::recursive_mutex> hold(fedavg::comm::state().ucx);
    auto& w = fedavg::comm::state().workers;
    for (auto it = w.begin(); it != w.end();) it = *it == worker ? w.erase(it) : it + 1;
  }
  real(worker);
}

FEDAVG_EXPORT ucs_status_ptr_t ucp_disconnect_nb(ucp_ep_h ep) {
  FEDAVG_REAL(ucp_disconnect_nb);
  fedavg::comm::start_progress();
  Serialised s;
  return real(ep);
}

FEDAVG_SERIALISED(unsigned, ucp_worker_progress, (ucp_worker_h worker), (worker))
FEDAVG_SERIALISED(ucs_status_t, ucp_request_check_status, (void* request), (request))
FEDAVG_SERIALISED(int, ucp_request_is_completed, (void* request), (request))
FEDAVG_SERIALISED(void, ucp_request_free, (void* request), (request))
FEDAVG_SERIALISED(void, ucp_request_release, (void* request), (request))
FEDAVG_SERIALISED(void, ucp_request_cancel, (ucp_worker_h worker, void* request), (worker, request))
FEDAVG_SERIALISED(ucs_status_t, ucp_ep_flush, (ucp_ep_h ep), (ep))
FEDAVG_SERIALISED(ucs_status_ptr_t, ucp_worker_flush_nb, (ucp_worker_h worker, unsigned flags, ucp_send_callback_t cb),
                  (worker, flags, cb))
FEDAVG_SERIALISED(void, ucp_rkey_destroy, (ucp_rkey_h rkey), (rkey))
FEDAVG_SERIALISED(ucs_status_t, ucp_mem_unmap, (ucp_context_h context, ucp_mem_h memh), (context, memh))

}  // extern "C"
