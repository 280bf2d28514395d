#include "roles/tokenizer.hpp"

#include <deque>
#include <map>
#include <memory>
#include <optional>

#include "bridge/text.hpp"
#include "comm/credit_line.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "core/error.hpp"
#include "core/held_out.hpp"
#include "core/log.hpp"
#include "data/markers.hpp"
#include "data/token_source.hpp"

namespace fedavg::roles {
namespace {

// The token cache folder (none with token_cache off) and the files besides the corpus a cache depends on.
data::TokenCacheSpec token_cache_spec(const core::Config& cfg) {
  if (!cfg.settings.token_cache) return {};
  const std::filesystem::path dir = cfg.settings.token_cache_dir.empty()
                                        ? cfg.out_dir / "cache"
                                        : std::filesystem::path(cfg.settings.token_cache_dir);
  return {dir, {cfg.vocab_path(), cfg.python_dir / "textpipe.py"}};
}

// The token sources of one Tokenizer, one per corpus file it reads, made on first use. textpipe is imported on
// the first block that needs tokenizing: a run that replays token caches never imports it.
class Sources {
 public:
  explicit Sources(const Context& ctx) : ctx_(ctx) {}

  data::TokenSource& of(std::size_t file) {
    auto& slot = sources_[file];
    if (!slot) {
      slot = std::make_unique<data::TokenSource>(
          [this](const char* block, std::size_t size, std::vector<std::int32_t>& out) { tokenize(block, size, out); },
          ctx_.cfg.corpora.at(file), ctx_.cfg.settings, ctx_.me, ctx_.cfg.vocab_path().string(),
          core::held_out_lines(ctx_.cfg.held_out_path(), ctx_.cfg.corpora, file), token_cache_spec(ctx_.cfg));
    }
    return *slot;
  }

  // "token blocks: N tokenized, M replayed from the token cache", over every file.
  std::string summary() const {
    std::int64_t tokenized = 0, replayed = 0;
    for (const auto& [file, s] : sources_) {
      tokenized += s->tokenized_blocks();
      replayed += s->replayed_blocks();
    }
    return "token blocks: " + std::to_string(tokenized) + " tokenized, " + std::to_string(replayed) +
           " replayed from the token cache";
  }

 private:
  void tokenize(const char* block, std::size_t size, std::vector<std::int32_t>& out) {
    if (!text_) {
      text_.emplace(ctx_.py);
      text_->load_vocab(ctx_.cfg.vocab_path());
    }
    text_->tokenize(block, size, out);
  }

  const Context& ctx_;
  std::optional<bridge::Text> text_;
  std::map<std::size_t, std::unique_ptr<data::TokenSource>> sources_;
};

}  // namespace

void Tokenizer::run() {
  if (ctx_.cfg.sharded()) run_shards();
  else run_file();
}

void Tokenizer::run_file() {
  const auto& s = ctx_.cfg.settings;
  const int pipeline = ctx_.map.pipeline_of_stage(ctx_.me.rank);
  const int filter = ctx_.map.filter(pipeline);
  const int dispatcher = ctx_.map.dispatcher();

  Sources sources(ctx_);
  data::TokenSource& source = sources.of(static_cast<std::size_t>(pipeline));
  if (ctx_.cfg.resume) {
    core::ReadPosition::Wire from{};
    ctx_.world.receive_into(ctx_.world.await_message(dispatcher, comm::Tag::ResumeFrom,
                                                     comm::Deadline::after(s.liveness_seconds * comm::kIndirect),
                                                     "the read position from the Dispatcher"),
                            from.data(), from.size());
    source.seek(core::ReadPosition::decode(from));
  }

  comm::Outbox outbox(ctx_.world);
  comm::IdleWatch watch(s.liveness_seconds, ctx_.waits.stage());
  comm::CreditLine to_filter(ctx_.world, filter, "Filter rank " + std::to_string(filter));
  long blocks = 0;

  while (!to_filter.stopped()) {
    outbox.retire();
    bool progress = to_filter.poll();
    if (to_filter.can_send()) {
      ctx_.hooks.reached(++blocks);
      outbox.send(source.next(), filter, comm::Tag::Tokens);
      outbox.send(source.position().encode(), dispatcher, comm::Tag::Position);
      to_filter.spend();
      progress = true;
    }
    if (progress) {
      watch.progress();
    } else {
      watch.idle([&] { return "a credit from " + to_filter.who(); }, comm::kIndirect);
    }
  }
  comm::acknowledge_stop(outbox, filter, comm::Deadline::after(s.liveness_seconds));
  // The final report: a negative pass count.
  outbox.send(core::ReadPosition{source.position().offset, -1}.encode(), dispatcher, comm::Tag::Position);
  outbox.flush(comm::Deadline::after(s.liveness_seconds));
  core::note(ctx_.me, sources.summary());
}

void Tokenizer::run_shards() {
  const auto& s = ctx_.cfg.settings;
  const int pipeline = ctx_.map.pipeline_of_stage(ctx_.me.rank);
  const int filter = ctx_.map.filter(pipeline);
  const int dispatcher = ctx_.map.dispatcher();

  Sources sources(ctx_);
  comm::Outbox outbox(ctx_.world);
  comm::IdleWatch watch(s.liveness_seconds, ctx_.waits.stage());
  comm::CreditLine to_filter(ctx_.world, filter, "Filter rank " + std::to_string(filter));
  std::deque<comm::ShardGrant> granted;
  std::optional<comm::ShardGrant> reading;
  data::TokenSource* source = nullptr;
  long promised = comm::kShardsAhead;  // grants the Dispatcher owes: kShardsAhead at start, then one per ShardDone
  long received = 0;
  long blocks = 0;
  auto take_grants = [&] {
    bool any = false;
    while (auto a = ctx_.world.probe(dispatcher, comm::Tag::Shard)) {
      comm::ShardGrant::Wire w{};
      ctx_.world.receive_into(*a, w.data(), w.size());
      const auto g = comm::ShardGrant::decode(w);
      if (g.file >= static_cast<std::int64_t>(ctx_.cfg.corpora.size()))
        throw core::Error("the Dispatcher granted shard " + std::to_string(g.shard) + " of corpus file " +
                          std::to_string(g.file) + ", but there are " + std::to_string(ctx_.cfg.corpora.size()));
      granted.push_back(g);
      ++received;
      any = true;
    }
    return any;
  };

  while (!to_filter.stopped()) {
    outbox.retire();
    bool progress = to_filter.poll();
    progress = take_grants() || progress;
    if (!reading && !granted.empty()) {
      reading = granted.front();
      granted.pop_front();
      source = &sources.of(static_cast<std::size_t>(reading->file));
      source->set_range(reading->begin, reading->end);
    }
    if (reading && to_filter.can_send()) {
      ctx_.hooks.reached(++blocks);
      auto ids = source->next();
      const bool last = !ids.empty() && ids.back() == data::kEof;
      outbox.send(std::move(ids), filter, comm::Tag::Tokens);
      to_filter.spend();
      if (last) {  // read all of it: report it, which asks for the next
        outbox.send(comm::ShardDone{reading->shard, reading->epoch}.encode(), dispatcher, comm::Tag::ShardDone);
        ++promised;
        reading.reset();
      }
      progress = true;
    }
    if (progress) {
      watch.progress();
    } else {
      watch.idle(
          [&] { return reading ? "a credit from " + to_filter.who() : std::string("a shard from the Dispatcher"); },
          comm::kIndirect);
    }
  }
  comm::acknowledge_stop(outbox, filter, comm::Deadline::after(s.liveness_seconds));
  // Take the grants still on their way (one for each ShardDone sent), so that no message is left unreceived.
  comm::poll_until([&] { take_grants(); return received == promised; },
                   comm::Deadline::after(s.liveness_seconds * comm::kIndirect), "the shards the Dispatcher owes");
  // The final report: a negative pass count.
  outbox.send(core::ReadPosition{0, -1}.encode(), dispatcher, comm::Tag::Position);
  outbox.flush(comm::Deadline::after(s.liveness_seconds));
  core::note(ctx_.me, sources.summary());
}

}  // namespace fedavg::roles
