#include "roles/filter.hpp"

#include "bridge/text.hpp"
#include "comm/credit_line.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "data/subsampler.hpp"
#include "data/windower.hpp"

namespace fedavg::roles {

void Filter::run() {
  const auto& s = ctx_.cfg.settings;
  const auto& world = ctx_.world;
  const int pipeline = ctx_.map.pipeline_of_stage(ctx_.me.rank);
  const int tokenizer = ctx_.map.tokenizer(pipeline);
  const int batcher = ctx_.map.batcher(pipeline);
  // With shards, each shard ends with an end-of-file marker and may hold no window; the Dispatcher checks the
  // whole corpus instead.
  const bool sharded = ctx_.cfg.sharded();
  const std::string corpus = sharded ? std::string() : ctx_.cfg.corpora.at(static_cast<std::size_t>(pipeline));

  bridge::Text text(ctx_.py);
  const core::Vocabulary vocab = text.load_vocab(ctx_.cfg.vocab_path());
  if (s.sample > 0 && vocab.counts.empty())
    core::warn(ctx_.me, "vocab.txt has no word counts, so subsampling (sample in cfg.json) is off");
  data::Subsampler subsampler(vocab.counts, s.sample, s.seed * 1000003u + static_cast<std::uint64_t>(pipeline));
  data::Windower windower(s.window, s.cross_lines, s.cross_oov);
  const auto block_windows = static_cast<std::size_t>(s.window_block);
  comm::Outbox outbox(world);
  comm::IdleWatch watch(s.liveness_seconds, ctx_.waits.stage());

  outbox.send(comm::Credit{s.credits}.encode(), tokenizer, comm::Tag::Credit);
  std::vector<std::int32_t> tokens;
  std::size_t pos = 0;
  bool have_tokens = false;
  std::vector<std::int32_t> out;
  out.reserve(block_windows * static_cast<std::size_t>(windower.width()));
  comm::CreditLine to_batcher(world, batcher, "Batcher rank " + std::to_string(batcher));
  long blocks = 0;

  for (;;) {
    outbox.retire();
    bool progress = to_batcher.poll();
    if (to_batcher.stopped()) break;
    if (!have_tokens) {
      if (auto a = world.probe(tokenizer, comm::Tag::Tokens)) {
        world.receive(*a, tokens);
        ctx_.hooks.reached(++blocks);
        subsampler.apply(tokens.data(), tokens.size());
        pos = 0;
        have_tokens = true;
        progress = true;
      }
    }
    const bool out_full = out.size() >= block_windows * static_cast<std::size_t>(windower.width());
    if (have_tokens && !out_full) {
      pos = windower.feed(tokens.data(), tokens.size(), pos, out, block_windows);
      if (!sharded && windower.empty_epoch_seen())
        throw core::Error("corpus " + corpus + ": no window in the whole file of " + data::window_conditions(s));
      for (const std::int64_t windows : windower.take_finished_passes())
        outbox.send(std::vector<std::int64_t>{windows}, ctx_.map.dispatcher(), comm::Tag::PassWindows);
      if (pos == tokens.size()) {
        have_tokens = false;
        outbox.send(comm::Credit{1}.encode(), tokenizer, comm::Tag::Credit);
      }
      progress = true;
    }
    if (out.size() >= block_windows * static_cast<std::size_t>(windower.width()) && to_batcher.can_send()) {
      std::vector<std::int32_t> full;
      full.swap(out);
      out.reserve(full.size());
      outbox.send(std::move(full), batcher, comm::Tag::Windows);
      to_batcher.spend();
      progress = true;
    }
    if (progress) {
      watch.progress();
    } else {
      watch.idle(
          [&] {
            return have_tokens ? "a credit from " + to_batcher.who()
                               : "tokens from Tokenizer rank " + std::to_string(tokenizer);
          },
          have_tokens ? comm::kIndirect : comm::kDirect);
    }
  }
  const auto deadline = comm::Deadline::after(s.liveness_seconds);
  comm::acknowledge_stop(outbox, batcher, deadline);
  comm::stop_upstream(world, tokenizer, "Tokenizer rank " + std::to_string(tokenizer), deadline);
}

}  // namespace fedavg::roles
