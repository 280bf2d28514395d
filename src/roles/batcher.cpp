#include "roles/batcher.hpp"

#include <algorithm>
#include <deque>
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

}  // namespace

void Batcher::run() {
  const auto& s = ctx_.cfg.settings;
  const auto& world = ctx_.world;
  const int pipeline = ctx_.map.pipeline_of_stage(ctx_.me.rank);
  const int filter = ctx_.map.filter(pipeline);
  const auto learners = ctx_.map.learners_of(pipeline);
  const int width = s.window_width();

  bridge::Text text(ctx_.py);
  const std::int32_t vocab_size = text.load_vocab(ctx_.cfg.vocab_path()).size();

  // Keep prefetch_rounds rounds of windows per learner ready, in blocks of window_block windows.
  const std::int64_t want = s.prefetch_rounds * s.windows_per_round() * static_cast<std::int64_t>(learners.size());
  const auto capacity_blocks = static_cast<std::int32_t>(std::max<std::int64_t>(2, (want + s.window_block - 1) / s.window_block + 1));

  comm::Outbox outbox(world);
  comm::IdleWatch watch(s.liveness_seconds, ctx_.waits.stage());
  outbox.send(comm::Credit{capacity_blocks}.encode(), filter, comm::Tag::Credit);

  std::deque<std::vector<std::int32_t>> blocks;
  std::size_t front_used = 0;  // windows already taken from blocks.front()
  std::int64_t ready = 0;      // windows buffered in blocks and not yet taken
  // shuffle_windows > 0: blocks move whole into the pool, which keeps at least that many windows after every
  // batch, and batches draw from it at random. The pool is outside the credit line, so the Filter keeps the
  // prefetch blocks coming while it fills.
  const std::int64_t shuffle = s.shuffle_windows;
  data::WindowPool pool(width, s.seed * 1000003u + static_cast<std::uint64_t>(pipeline) + 0x5eedu);
  auto pool_front_block = [&] {
    const auto n = static_cast<std::int64_t>(blocks.front().size()) / width;
    pool.add(blocks.front().data(), n);
    ready -= n;
    blocks.pop_front();
    outbox.send(comm::Credit{1}.encode(), filter, comm::Tag::Credit);
  };
  auto available = [&] { return shuffle > 0 ? pool.size() - shuffle + ready : ready; };
  std::deque<Pending> pending;
  std::set<int> active(learners.begin(), learners.end());
  long served = 0;
  // With fixed_batch_order, learners are served in rotation (learner order), whatever order requests arrive in.
  std::size_t turn = 0;
  auto next_request = [&]() -> std::deque<Pending>::iterator {
    if (!s.fixed_batch_order) return pending.begin();
    // Skip learners that have left; only the first active learner in the rotation may be served.
    for (std::size_t k = 0; k < learners.size() && !active.count(learners[turn]); ++k) turn = (turn + 1) % learners.size();
    const int who = learners[turn];
    return std::find_if(pending.begin(), pending.end(), [&](const Pending& p) { return p.learner == who; });
  };


  while (!active.empty()) {
    outbox.retire();
    bool progress = false;
    while (auto a = world.probe(filter, comm::Tag::Windows)) {
      std::vector<std::int32_t> block;
      world.receive(*a, block);
      ready += static_cast<std::int64_t>(comm::check_windows(block.data(), block.size(), width, vocab_size));
      blocks.push_back(std::move(block));
      progress = true;
    }
    while (shuffle > 0 && pool.size() < shuffle && !blocks.empty()) pool_front_block();
    while (auto a = world.probe(comm::kAnySource, std::nullopt)) {
      if (a->source == filter) break;  // a Windows block arrived meanwhile; taken on the next pass
      if (!active.count(a->source))
        throw core::Error("unexpected message tag " + std::to_string(comm::tag_value(a->tag)) + " from rank " +
                          std::to_string(a->source) + ", which is not an active learner of pipeline " +
                          std::to_string(pipeline));
      if (a->tag == comm::Tag::Request) {
        comm::WindowRequest::Wire w{};
        world.receive_into(*a, w.data(), w.size());
        // Ends a wait for requests; while earlier requests wait for windows, the Filter's silence goes on.
        progress = progress || pending.empty();
        pending.push_back({a->source, comm::WindowRequest::decode(w).windows});
      } else if (a->tag == comm::Tag::Shutdown) {
        progress = true;
        world.discard(*a);
        const int who = a->source;
        pending.erase(std::remove_if(pending.begin(), pending.end(), [&](const Pending& p) { return p.learner == who; }),
                      pending.end());
        outbox.send_empty(who, comm::Tag::ShutdownAck);  // ordered after any Batch already sent to it
        active.erase(who);
      } else {
        throw core::Error("unexpected message tag " + std::to_string(comm::tag_value(a->tag)) + " from Learner rank " +
                          std::to_string(a->source));
      }
    }
    for (auto it = next_request(); it != pending.end() && it->windows <= available(); it = next_request()) {
      const Pending p = *it;
      pending.erase(it);
      turn = (turn + 1) % learners.size();
      ctx_.hooks.reached(++served);
      std::vector<std::int32_t> batch;
      batch.reserve(static_cast<std::size_t>(p.windows * width));
      if (shuffle > 0) {
        while (pool.size() < shuffle + p.windows) pool_front_block();
        pool.draw(p.windows, batch);
      }
      std::int64_t need = shuffle > 0 ? 0 : p.windows;
      while (need > 0) {
        auto& front = blocks.front();
        const std::size_t in_front = front.size() / static_cast<std::size_t>(width) - front_used;
        const std::size_t take = static_cast<std::size_t>(std::min<std::int64_t>(need, static_cast<std::int64_t>(in_front)));
        const auto first = front.begin() + static_cast<std::ptrdiff_t>(front_used * static_cast<std::size_t>(width));
        batch.insert(batch.end(), first, first + static_cast<std::ptrdiff_t>(take * static_cast<std::size_t>(width)));
        front_used += take;
        need -= static_cast<std::int64_t>(take);
        if (front_used * static_cast<std::size_t>(width) == front.size()) {
          blocks.pop_front();
          front_used = 0;
          outbox.send(comm::Credit{1}.encode(), filter, comm::Tag::Credit);
        }
      }
      if (shuffle == 0) ready -= p.windows;
      outbox.send(std::move(batch), p.learner, comm::Tag::Batch);
      progress = true;
    }
    if (progress) {
      watch.progress();
    } else {
      watch.idle(
          [&] {
            return pending.empty() ? "a request from learner rank(s) " + rank_list(active)
                                   : "windows from Filter rank " + std::to_string(filter);
          },
          pending.empty() ? comm::kIndirect : comm::kDirect);
    }
  }
  const auto deadline = comm::Deadline::after(s.liveness_seconds);
  outbox.flush(deadline);
  comm::stop_upstream(world, filter, "Filter rank " + std::to_string(filter), deadline);
}

}  // namespace fedavg::roles
