#include "roles/tokenizer.hpp"

#include <deque>
#include <map>
#include <memory>
#include <optional>

#include "bridge/plain_corpus.hpp"
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
      if (const auto it = ctx_.cfg.compressed.find(file); it != ctx_.cfg.compressed.end())
        bridge::PlainCorpus(ctx_.py).ensure(it->second, ctx_.cfg.plain_corpora_dir());
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

// What reading a corpus file and reading shards share: token blocks go to the Filter against its credits, reports
// go to the Dispatcher, and a pass with nothing to do waits behind the Filter (kIndirect).
class TokenStream {
 public:
  explicit TokenStream(const Context& ctx)
      : ctx_(ctx),
        liveness_(ctx.cfg.settings.liveness_seconds),
        filter_(ctx.map.filter(ctx.map.pipeline_of_stage(ctx.me.rank))),
        dispatcher_(ctx.map.dispatcher()),
        outbox_(ctx.world),
        watch_(liveness_, ctx.waits.stage()),
        to_filter_(ctx.world, filter_, "Filter rank " + std::to_string(filter_)) {}

  bool stopped() const { return to_filter_.stopped(); }
  bool can_send() const { return to_filter_.can_send(); }
  const std::string& filter_name() const { return to_filter_.who(); }

  // Starts a pass of the event loop: releases completed sends and takes the Filter's credits; returns whether any
  // came.
  bool begin_pass() {
    outbox_.retire();
    return to_filter_.poll();
  }
  // `from_dispatcher`: the pass waited for a shard, else for a credit.
  template <typename Awaited> void end_pass(bool progressed, const Awaited& awaited, bool from_dispatcher = false) {
    watch_.end_pass(progressed, awaited, comm::kIndirect, {from_dispatcher ? dispatcher_ : filter_});
  }
  // Sends the next block of `source` to the Filter against one credit; returns whether it ends a shard.
  bool send_block(data::TokenSource& source) {
    ctx_.hooks.reached(++blocks_);
    auto ids = source.next();
    const bool last = !ids.empty() && ids.back() == data::kEof;
    outbox_.send(std::move(ids), filter_, comm::Tag::Tokens);
    to_filter_.spend();
    return last;
  }
  template <std::size_t N> void report(const std::array<std::int64_t, N>& wire, comm::Tag tag) {
    outbox_.send(wire, dispatcher_, tag);
  }
  void acknowledge_stop() { comm::acknowledge_stop(outbox_, filter_, comm::Deadline::after(liveness_)); }
  // The final report to the Dispatcher (a negative pass count), then every send completed, then the summary.
  void finish(std::int64_t offset, const Sources& sources) {
    report(core::ReadPosition{offset, -1}.encode(), comm::Tag::Position);
    outbox_.flush(comm::Deadline::after(liveness_));
    core::note(ctx_.me, sources.summary());
  }

 private:
  const Context& ctx_;
  const double liveness_;
  const int filter_;
  const int dispatcher_;
  comm::Outbox outbox_;
  comm::IdleWatch watch_;
  comm::CreditLine to_filter_;
  long blocks_ = 0;
};

// One pipeline per file: reads corpus file p forever, reporting its read position after every block.
class FileReader {
 public:
  explicit FileReader(const Context& ctx)
      : ctx_(ctx),
        sources_(ctx),
        source_(resumed(sources_.of(static_cast<std::size_t>(ctx.map.pipeline_of_stage(ctx.me.rank))))),
        stream_(ctx) {}

  void run() {
    while (!stream_.stopped()) {
      bool progress = stream_.begin_pass();
      if (stream_.can_send()) {
        stream_.send_block(source_);
        stream_.report(source_.position().encode(), comm::Tag::Position);
        progress = true;
      }
      stream_.end_pass(progress, [&] { return "a credit from " + stream_.filter_name(); });
    }
    stream_.acknowledge_stop();
    stream_.finish(source_.position().offset, sources_);
  }

 private:
  // With --resume, moves `source` to the read position the Dispatcher sends.
  data::TokenSource& resumed(data::TokenSource& source) {
    if (!ctx_.cfg.resume) return source;
    core::ReadPosition::Wire from{};
    ctx_.world.receive_into(
        ctx_.world.await_message(ctx_.map.dispatcher(), comm::Tag::ResumeFrom,
                                 comm::Deadline::after(ctx_.cfg.settings.liveness_seconds * comm::kIndirect),
                                 "the read position from the Dispatcher"),
        from.data(), from.size());
    source.seek(core::ReadPosition::decode(from));
    return source;
  }

  const Context& ctx_;
  Sources sources_;
  data::TokenSource& source_;
  TokenStream stream_;  // made after the resume, so that its liveness clock starts there
};

// Shards: reads the shards the Dispatcher grants, one after the other, and reports each one read.
class ShardReader {
 public:
  explicit ShardReader(const Context& ctx) : ctx_(ctx), sources_(ctx), stream_(ctx) {}

  void run() {
    while (!stream_.stopped()) {
      bool progress = stream_.begin_pass();
      progress = take_grants() || progress;
      if (!reading_ && !granted_.empty()) start_shard();
      progress = send_block() || progress;
      stream_.end_pass(
          progress,
          [&] {
            return reading_ ? "a credit from " + stream_.filter_name() : std::string("a shard from the Dispatcher");
          },
          !reading_);
    }
    stream_.acknowledge_stop();
    // Take the grants still on their way (one for each ShardDone sent), so that no message is left unreceived.
    comm::poll_until(
        [&] {
          take_grants();
          return received_ > 0 && received_ == promised_;
        },
        comm::Deadline::after(ctx_.cfg.settings.liveness_seconds * comm::kIndirect), "the shards the Dispatcher owes");
    stream_.finish(0, sources_);
  }

 private:
  // Receives every shard grant that has arrived; returns whether any did.
  bool take_grants() {
    bool any = false;
    while (auto a = ctx_.world.probe(ctx_.map.dispatcher(), comm::Tag::Shard)) {
      comm::ShardGrant::Wire w{};
      ctx_.world.receive_into(*a, w.data(), w.size());
      const auto g = comm::ShardGrant::decode(w);
      if (g.file >= static_cast<std::int64_t>(ctx_.cfg.corpora.size()))
        throw core::Error("the Dispatcher granted shard " + std::to_string(g.shard) + " of corpus file " +
                          std::to_string(g.file) + ", but there are " + std::to_string(ctx_.cfg.corpora.size()));
      if (received_ == 0) promised_ += g.ahead;
      granted_.push_back(g);
      ++received_;
      any = true;
    }
    return any;
  }

  void start_shard() {
    reading_ = granted_.front();
    granted_.pop_front();
    source_ = &sources_.of(static_cast<std::size_t>(reading_->file));
    source_->set_range(reading_->begin, reading_->end);
  }

  // Sends the shard's next block against a credit; once it has read all of it, reports it, which asks for the next.
  bool send_block() {
    if (!reading_ || !stream_.can_send()) return false;
    if (stream_.send_block(*source_)) {
      stream_.report(comm::ShardDone{reading_->shard, reading_->epoch}.encode(), comm::Tag::ShardDone);
      ++promised_;
      reading_.reset();
    }
    return true;
  }

  const Context& ctx_;
  Sources sources_;
  TokenStream stream_;
  std::deque<comm::ShardGrant> granted_;
  std::optional<comm::ShardGrant> reading_;
  data::TokenSource* source_ = nullptr;
  long promised_ = 0;  // grants the Dispatcher owes: `ahead` (told by the first) at start, then one per ShardDone
  long received_ = 0;
};

}  // namespace

void Tokenizer::run() {
  if (ctx_.cfg.sharded()) ShardReader(ctx_).run();
  else FileReader(ctx_).run();
}

}  // namespace fedavg::roles
