#include "roles/tokenizer.hpp"

#include <algorithm>
#include <array>

#include "bridge/text.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "core/error.hpp"
#include "core/fault.hpp"
#include "core/line_reader.hpp"
#include "core/log.hpp"
#include "core/utf8.hpp"

namespace fedavg::roles {

void Tokenizer::run() {
  const auto& s = ctx_.cfg.settings;
  const int pipeline = ctx_.map.pipeline_of_stage(ctx_.me.rank);
  const int filter = ctx_.map.filter(pipeline);
  const std::string& corpus = ctx_.cfg.corpora.at(static_cast<std::size_t>(pipeline));

  bridge::Text text(ctx_.py);
  text.load_vocab(ctx_.cfg.vocab_path());
  core::LineReader reader(corpus, static_cast<std::size_t>(s.text_block_bytes), s.max_line_bytes);
  const int dispatcher = ctx_.map.dispatcher();
  if (ctx_.cfg.resume) {
    std::array<std::int64_t, 2> from{};
    comm::poll_until(
        [&] {
          auto a = ctx_.world.probe(dispatcher, comm::Tag::ResumeFrom);
          if (a) ctx_.world.receive_into(*a, from.data(), from.size());
          return a.has_value();
        },
        comm::Deadline::after(s.liveness_seconds * comm::kIndirect), "the read position from the Dispatcher");
    reader.seek(from[0], from[1]);
  }

  comm::Outbox outbox(ctx_.world);
  comm::IdleWatch watch(s.liveness_seconds);
  std::int64_t credits = 0;
  std::int64_t known_words_this_epoch = 0;
  std::string block;
  long blocks = 0;
  bool warned_utf8 = false;
  bool stop = false;

  while (!stop) {
    outbox.retire();
    bool progress = false;
    while (auto a = ctx_.world.probe(filter, std::nullopt)) {
      progress = true;
      if (a->tag == comm::Tag::Credit) {
        comm::Credit::Wire w{};
        ctx_.world.receive_into(*a, w.data(), w.size());
        credits += comm::Credit::decode(w).blocks;
      } else if (a->tag == comm::Tag::Shutdown) {
        ctx_.world.discard(*a);
        stop = true;
      } else {
        throw core::Error("unexpected message tag " + std::to_string(comm::tag_value(a->tag)) + " from Filter rank " +
                          std::to_string(filter));
      }
    }
    if (!stop && credits > 0) {
      core::inject_faults(ctx_.cfg.faults, ctx_.me, ++blocks);
      const bool end_of_file = reader.next_block(block);
      if (!warned_utf8) {
        const auto bad = core::first_invalid_utf8(block);
        if (bad != std::string::npos) {
          const auto line = reader.block_first_line() + std::count(block.begin(), block.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
          core::warn(ctx_.me, corpus + ":" + std::to_string(line) +
                                  ": invalid UTF-8; such bytes are read as U+FFFD (not a letter), so they only split "
                                  "words (warned once per file)");
          warned_utf8 = true;
        }
      }
      std::vector<std::int32_t> ids;
      ids.reserve(block.size() / 4 + 2);
      text.tokenize(block.data(), block.size(), ids);
      for (auto id : ids) known_words_this_epoch += id >= 0;
      if (end_of_file) {
        if (known_words_this_epoch == 0)
          throw core::Error("corpus " + corpus + ": not one word of the file is in the vocabulary " +
                            ctx_.cfg.vocab_path().string());
        known_words_this_epoch = 0;
        ids.push_back(comm::kEof);
      }
      outbox.send(std::move(ids), filter, comm::Tag::Tokens);
      outbox.send(std::vector<std::int64_t>{reader.position(), reader.epochs_completed()}, dispatcher,
                  comm::Tag::Position);
      --credits;
      progress = true;
    }
    if (progress) {
      watch.progress();
    } else {
      watch.idle([&] { return "a credit from Filter rank " + std::to_string(filter); }, comm::kIndirect);
    }
  }
  comm::acknowledge_stop(outbox, filter, comm::Deadline::after(s.liveness_seconds));
  outbox.send(std::vector<std::int64_t>{reader.position(), -1}, dispatcher, comm::Tag::Position);  // final report
  outbox.flush(comm::Deadline::after(s.liveness_seconds));
}

}  // namespace fedavg::roles
