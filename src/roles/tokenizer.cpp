#include "roles/tokenizer.hpp"

#include <optional>

#include "bridge/text.hpp"
#include "comm/credit_line.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "core/held_out.hpp"
#include "core/log.hpp"
#include "data/token_source.hpp"

namespace fedavg::roles {
namespace {

// The token cache folder (none with token_cache off) and the files besides the corpus a cache depends on.
data::TokenCacheSpec token_cache_spec(const core::Config& cfg) {
  if (!cfg.settings.token_cache) return {};
  const std::filesystem::path dir =
      cfg.settings.token_cache_dir.empty() ? cfg.out_dir / "cache" : std::filesystem::path(cfg.settings.token_cache_dir);
  return {dir, {cfg.vocab_path(), cfg.python_dir / "textpipe.py"}};
}

}  // namespace

void Tokenizer::run() {
  const auto& s = ctx_.cfg.settings;
  const int pipeline = ctx_.map.pipeline_of_stage(ctx_.me.rank);
  const int filter = ctx_.map.filter(pipeline);
  const int dispatcher = ctx_.map.dispatcher();

  // textpipe is imported on the first block that needs tokenizing: a run that replays token caches never does.
  std::optional<bridge::Text> text;
  data::TokenSource source(
      [&](const char* block, std::size_t size, std::vector<std::int32_t>& out) {
        if (!text) {
          text.emplace(ctx_.py);
          text->load_vocab(ctx_.cfg.vocab_path());
        }
        text->tokenize(block, size, out);
      },
      ctx_.cfg.corpora.at(static_cast<std::size_t>(pipeline)), s, ctx_.me, ctx_.cfg.vocab_path().string(),
      core::held_out_lines(ctx_.cfg.held_out_path(), ctx_.cfg.corpora, static_cast<std::size_t>(pipeline)),
      token_cache_spec(ctx_.cfg));
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
  core::log_line(ctx_.me, "token blocks: " + std::to_string(source.tokenized_blocks()) + " tokenized, " +
                              std::to_string(source.replayed_blocks()) + " replayed from the token cache");
}

}  // namespace fedavg::roles
