#include "roles/batcher.hpp"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>

#include "bridge/text.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "core/error.hpp"
#include "data/window_pool.hpp"

namespace fedavg::roles {
namespace {

struct Pending {
  int learner;
  std::int64_t windows;
};

std::string rank_list(const std::set<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

// The windows received from the Filter and not yet served, in blocks in arrival order. With shuffle_windows > 0,
// blocks move whole into the pool, which keeps at least that many windows after every batch, and batches draw
// from it at random. The pool is outside the credit line, so the Filter keeps the prefetch blocks coming while
// it fills. Returns a credit to the Filter for every block used up.
class WindowStock {
 public:
  WindowStock(const core::Settings& s, int width, int pipeline, comm::Outbox& outbox, int filter)
      : width_(width),
        shuffle_(s.shuffle_windows),
        pool_(width, s.seed * 1000003u + static_cast<std::uint64_t>(pipeline) + 0x5eedu),
        outbox_(outbox),
        filter_(filter) {}

  void add(std::vector<std::int32_t>&& block, std::int64_t windows) {
    ready_ += windows;
    blocks_.push_back(std::move(block));
  }
  // Tops the pool up to shuffle_windows from the blocks at hand.
  void fill_pool() {
    while (shuffle_ > 0 && pool_.size() < shuffle_ && !blocks_.empty()) pool_front_block();
  }
  // How many windows a batch may take now.
  std::int64_t available() const { return shuffle_ > 0 ? pool_.size() - shuffle_ + ready_ : ready_; }
  // Appends `windows` windows to `batch`: drawn from the pool, or in order from the blocks. Needs available().
  void take(std::int64_t windows, std::vector<std::int32_t>& batch) {
    if (shuffle_ > 0) {
      while (pool_.size() < shuffle_ + windows) pool_front_block();
      pool_.draw(windows, batch);
      return;
    }
    for (std::int64_t need = windows; need > 0;) need -= take_front(need, batch);
    ready_ -= windows;
  }

 private:
  void pool_front_block() {
    const auto n = static_cast<std::int64_t>(blocks_.front().size()) / width_;
    pool_.add(blocks_.front().data(), n);
    ready_ -= n;
    blocks_.pop_front();
    outbox_.send(comm::Credit{1}.encode(), filter_, comm::Tag::Credit);
  }
  // Appends up to `need` windows from the front block; returns how many.
  std::int64_t take_front(std::int64_t need, std::vector<std::int32_t>& batch) {
    const auto width = static_cast<std::size_t>(width_);
    auto& front = blocks_.front();
    const std::size_t in_front = front.size() / width - front_used_;
    const auto take = static_cast<std::size_t>(std::min<std::int64_t>(need, static_cast<std::int64_t>(in_front)));
    const auto first = front.begin() + static_cast<std::ptrdiff_t>(front_used_ * width);
    batch.insert(batch.end(), first, first + static_cast<std::ptrdiff_t>(take * width));
    front_used_ += take;
    if (front_used_ * width == front.size()) {
      blocks_.pop_front();
      front_used_ = 0;
      outbox_.send(comm::Credit{1}.encode(), filter_, comm::Tag::Credit);
    }
    return static_cast<std::int64_t>(take);
  }

  int width_;
  std::int64_t shuffle_;
  data::WindowPool pool_;
  comm::Outbox& outbox_;
  int filter_;
  std::deque<std::vector<std::int32_t>> blocks_;
  std::size_t front_used_ = 0;  // windows already taken from blocks_.front()
  std::int64_t ready_ = 0;      // windows buffered in blocks_ and not yet taken
};

// The learners' requests waiting for windows, and the learners that have not left. With fixed_batch_order,
// learners are served in rotation (learner order), whatever order requests arrive in.
class Requests {
 public:
  Requests(const std::vector<int>& learners, bool fixed_order)
      : learners_(learners), fixed_order_(fixed_order), active_(learners.begin(), learners.end()) {}

  bool done() const { return active_.empty(); }
  bool waiting() const { return !pending_.empty(); }
  bool is_active(int rank) const { return active_.count(rank) > 0; }
  const std::set<int>& active() const { return active_; }

  void add(int learner, std::int64_t windows) { pending_.push_back({learner, windows}); }
  // `learner` has left: drops its requests.
  void leave(int learner) {
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](const Pending& p) { return p.learner == learner; }),
                   pending_.end());
    active_.erase(learner);
  }
  // Removes and returns the request to serve next, if there is one and it asks for at most `available` windows.
  std::optional<Pending> next(std::int64_t available) {
    const auto it = first_in_turn();
    if (it == pending_.end() || it->windows > available) return std::nullopt;
    const Pending p = *it;
    pending_.erase(it);
    turn_ = (turn_ + 1) % learners_.size();
    return p;
  }

 private:
  std::deque<Pending>::iterator first_in_turn() {
    if (!fixed_order_) return pending_.begin();
    // Skip learners that have left; only the first active learner in the rotation may be served.
    for (std::size_t k = 0; k < learners_.size() && !active_.count(learners_[turn_]); ++k)
      turn_ = (turn_ + 1) % learners_.size();
    const int who = learners_[turn_];
    return std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.learner == who; });
  }

  const std::vector<int> learners_;
  bool fixed_order_;
  std::set<int> active_;
  std::deque<Pending> pending_;
  std::size_t turn_ = 0;
};

// One Batcher's run: the windows in stock, the requests waiting for them, and the sends in flight.
class BatcherRun {
 public:
  explicit BatcherRun(const Context& ctx)
      : ctx_(ctx),
        s_(ctx.cfg.settings),
        pipeline_(ctx.map.pipeline_of_stage(ctx.me.rank)),
        filter_(ctx.map.filter(pipeline_)),
        learners_(ctx.map.learners_of(pipeline_)),
        width_(s_.window_width()),
        text_(ctx.py),
        vocab_size_(static_cast<std::int32_t>(text_.load_vocab(ctx.cfg.vocab_path()).size())),
        outbox_(ctx.world),
        watch_(s_.liveness_seconds, ctx.waits.stage()),
        stock_(s_, width_, pipeline_, outbox_, filter_),
        requests_(learners_, s_.fixed_batch_order) {}

  void run() {
    outbox_.send(comm::Credit{capacity_blocks()}.encode(), filter_, comm::Tag::Credit);
    while (!requests_.done()) {
      outbox_.retire();
      bool progress = take_windows();
      stock_.fill_pool();
      progress = take_messages() || progress;
      progress = serve() || progress;
      watch_.end_pass(
          progress,
          [&] {
            return requests_.waiting() ? "windows from Filter rank " + std::to_string(filter_)
                                       : "a request from learner rank(s) " + rank_list(requests_.active());
          },
          requests_.waiting() ? comm::kDirect : comm::kIndirect, awaited());
    }
    const auto deadline = comm::Deadline::after(s_.liveness_seconds);
    outbox_.flush(deadline);
    comm::stop_upstream(ctx_.world, filter_, "Filter rank " + std::to_string(filter_), deadline);
  }

 private:
  // The ranks this Batcher waits on: its Filter while a request waits for windows, else its learners.
  std::vector<int> awaited() const {
    if (requests_.waiting()) return {filter_};
    return {requests_.active().begin(), requests_.active().end()};
  }
  // Keep prefetch_rounds rounds of windows per learner ready, in blocks of window_block windows.
  std::int32_t capacity_blocks() const {
    const std::int64_t want = s_.prefetch_rounds * ctx_.plan.windows_per_round(s_) *
                              static_cast<std::int64_t>(learners_.size());
    return static_cast<std::int32_t>(std::max<std::int64_t>(2, (want + s_.window_block - 1) / s_.window_block + 1));
  }

  // Receives every Windows block that has arrived; returns whether any did.
  bool take_windows() {
    bool any = false;
    while (auto a = ctx_.world.probe(filter_, comm::Tag::Windows)) {
      std::vector<std::int32_t> block;
      ctx_.world.receive(*a, block);
      const auto windows = comm::check_windows(block.data(), block.size(), width_, vocab_size_, s_.windows_cut_short());
      stock_.add(std::move(block), static_cast<std::int64_t>(windows));
      any = true;
    }
    return any;
  }

  // Takes the learners' Requests and Shutdowns; returns whether one ended a wait.
  bool take_messages() {
    bool progress = false;
    while (auto a = ctx_.world.probe(comm::kAnySource, std::nullopt)) {
      if (a->source == filter_) break;  // a Windows block arrived meanwhile; taken on the next pass
      if (!requests_.is_active(a->source))
        throw core::Error("unexpected message tag " + std::to_string(comm::tag_value(a->tag)) + " from rank " +
                          std::to_string(a->source) + ", which is not an active learner of pipeline " +
                          std::to_string(pipeline_));
      if (a->tag == comm::Tag::Request) {
        comm::WindowRequest::Wire w{};
        ctx_.world.receive_into(*a, w.data(), w.size());
        // Ends a wait for requests; while earlier requests wait for windows, the Filter's silence goes on.
        progress = progress || !requests_.waiting();
        requests_.add(a->source, comm::WindowRequest::decode(w).windows);
      } else if (a->tag == comm::Tag::Shutdown) {
        progress = true;
        ctx_.world.discard(*a);
        requests_.leave(a->source);
        outbox_.send_empty(a->source, comm::Tag::ShutdownAck);  // ordered after any Batch already sent to it
      } else {
        throw core::Error("unexpected message tag " + std::to_string(comm::tag_value(a->tag)) + " from Learner rank " +
                          std::to_string(a->source));
      }
    }
    return progress;
  }

  // Answers every request that the windows in stock can serve, in turn; returns whether it answered any.
  bool serve() {
    bool any = false;
    while (const auto p = requests_.next(stock_.available())) {
      ctx_.hooks.reached(++served_);
      std::vector<std::int32_t> batch;
      batch.reserve(static_cast<std::size_t>(p->windows * width_));
      stock_.take(p->windows, batch);
      outbox_.send(std::move(batch), p->learner, comm::Tag::Batch);
      any = true;
    }
    return any;
  }

  const Context& ctx_;
  const core::Settings& s_;
  const int pipeline_;
  const int filter_;
  const std::vector<int> learners_;
  const int width_;
  bridge::Text text_;
  const std::int32_t vocab_size_;
  comm::Outbox outbox_;
  comm::IdleWatch watch_;
  WindowStock stock_;
  Requests requests_;
  long served_ = 0;
};

}  // namespace

void Batcher::run() { BatcherRun(ctx_).run(); }

}  // namespace fedavg::roles
