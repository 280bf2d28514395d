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
namespace {

// One Filter's run: the token block it is cutting into windows, the block of windows it is filling, and the
// credit lines on both sides.
class FilterRun {
 public:
  explicit FilterRun(const Context& ctx)
      : ctx_(ctx),
        s_(ctx.cfg.settings),
        pipeline_(ctx.map.pipeline_of_stage(ctx.me.rank)),
        tokenizer_(ctx.map.tokenizer(pipeline_)),
        batcher_(ctx.map.batcher(pipeline_)),
        sharded_(ctx.cfg.sharded()),
        corpus_(sharded_ ? std::string() : ctx.cfg.corpora.at(static_cast<std::size_t>(pipeline_))),
        text_(ctx.py),
        vocab_(load_vocab()),
        subsampler_(vocab_.counts, s_.sample, s_.seed * 1000003u + static_cast<std::uint64_t>(pipeline_)),
        windower_(s_.window, s_.cross_lines, s_.cross_oov, s_.windows_cut_short() && s_.edge_windows,
                  s_.windows_cut_short() && s_.reduced_windows,
                  s_.seed * 1000003u + static_cast<std::uint64_t>(pipeline_) + 0x77u),
        block_ints_(static_cast<std::size_t>(s_.window_block) * static_cast<std::size_t>(windower_.width())),
        outbox_(ctx.world),
        watch_(s_.liveness_seconds, ctx.waits.stage()),
        to_batcher_(ctx.world, batcher_, "Batcher rank " + std::to_string(batcher_)) {
    out_.reserve(block_ints_);
  }

  void run() {
    outbox_.send(comm::Credit{s_.credits}.encode(), tokenizer_, comm::Tag::Credit);
    for (;;) {
      outbox_.retire();
      bool progress = to_batcher_.poll();
      if (to_batcher_.stopped()) break;
      progress = take_tokens() || progress;
      progress = cut_windows() || progress;
      progress = send_windows() || progress;
      watch_.end_pass(
          progress,
          [&] {
            return have_tokens_ ? "a credit from " + to_batcher_.who()
                                : "tokens from Tokenizer rank " + std::to_string(tokenizer_);
          },
          have_tokens_ ? comm::kIndirect : comm::kDirect, std::vector<int>{have_tokens_ ? batcher_ : tokenizer_});
    }
    const auto deadline = comm::Deadline::after(s_.liveness_seconds);
    comm::acknowledge_stop(outbox_, batcher_, deadline);
    comm::stop_upstream(ctx_.world, tokenizer_, "Tokenizer rank " + std::to_string(tokenizer_), deadline);
  }

 private:
  core::Vocabulary load_vocab() {
    core::Vocabulary vocab = text_.load_vocab(ctx_.cfg.vocab_path());
    if (s_.sample > 0 && vocab.counts.empty())
      core::warn(ctx_.me, "vocab.txt has no word counts, so subsampling (sample in cfg.json) is off");
    return vocab;
  }

  // Once the last token block is cut up: receives the next one, if it has arrived, and subsamples it.
  bool take_tokens() {
    if (have_tokens_) return false;
    auto a = ctx_.world.probe(tokenizer_, comm::Tag::Tokens);
    if (!a) return false;
    ctx_.world.receive(*a, tokens_);
    ctx_.hooks.reached(++blocks_);
    subsampler_.apply(tokens_.data(), tokens_.size());
    pos_ = 0;
    have_tokens_ = true;
    return true;
  }

  // Cuts windows from the token block until the window block is full or the tokens run out; grants the
  // Tokenizer a credit for a token block used up.
  bool cut_windows() {
    if (!have_tokens_ || out_.size() >= block_ints_) return false;
    pos_ = windower_.feed(tokens_.data(), tokens_.size(), pos_, out_, static_cast<std::size_t>(s_.window_block));
    // With shards, each shard ends with an end-of-file marker and may hold no window; the Dispatcher checks the
    // whole corpus instead.
    if (!sharded_ && windower_.empty_epoch_seen())
      throw core::Error("corpus " + corpus_ + ": no window in the whole file of " + data::window_conditions(s_));
    for (const std::int64_t windows : windower_.take_finished_passes())
      outbox_.send(std::vector<std::int64_t>{windows}, ctx_.map.dispatcher(), comm::Tag::PassWindows);
    if (pos_ == tokens_.size()) {
      have_tokens_ = false;
      outbox_.send(comm::Credit{1}.encode(), tokenizer_, comm::Tag::Credit);
    }
    return true;
  }

  // Sends the window block to the Batcher once it is full and the Batcher has granted a credit.
  bool send_windows() {
    if (out_.size() < block_ints_ || !to_batcher_.can_send()) return false;
    std::vector<std::int32_t> full;
    full.swap(out_);
    out_.reserve(full.size());
    outbox_.send(std::move(full), batcher_, comm::Tag::Windows);
    to_batcher_.spend();
    return true;
  }

  const Context& ctx_;
  const core::Settings& s_;
  const int pipeline_;
  const int tokenizer_;
  const int batcher_;
  const bool sharded_;
  const std::string corpus_;
  bridge::Text text_;
  const core::Vocabulary vocab_;
  data::Subsampler subsampler_;
  data::Windower windower_;
  const std::size_t block_ints_;  // ints in a full block of windows
  comm::Outbox outbox_;
  comm::IdleWatch watch_;
  comm::CreditLine to_batcher_;
  std::vector<std::int32_t> tokens_;  // the token block being cut up, from pos_ on
  std::size_t pos_ = 0;
  bool have_tokens_ = false;
  std::vector<std::int32_t> out_;  // the block of windows being filled
  long blocks_ = 0;
};

}  // namespace

void Filter::run() { FilterRun(ctx_).run(); }

}  // namespace fedavg::roles
