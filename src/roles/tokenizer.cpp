#include "roles/tokenizer.hpp"

#include "bridge/text.hpp"
#include "comm/credit_line.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "core/error.hpp"
#include "core/fault.hpp"
#include "roles/token_source.hpp"

namespace fedavg::roles {

void Tokenizer::run() {
  const auto& s = ctx_.cfg.settings;
  const int pipeline = ctx_.map.pipeline_of_stage(ctx_.me.rank);
  const int filter = ctx_.map.filter(pipeline);
  const int dispatcher = ctx_.map.dispatcher();

  bridge::Text text(ctx_.py);
  text.load_vocab(ctx_.cfg.vocab_path());
  TokenSource source(text, ctx_.cfg.corpora.at(static_cast<std::size_t>(pipeline)), s, ctx_.me,
                     ctx_.cfg.vocab_path().string());
  if (ctx_.cfg.resume) {
    core::ReadPosition from{};
    ctx_.world.receive_into(ctx_.world.await_message(dispatcher, comm::Tag::ResumeFrom,
                                                     comm::Deadline::after(s.liveness_seconds * comm::kIndirect),
                                                     "the read position from the Dispatcher"),
                            from.data(), from.size());
    source.seek(from);
  }

  comm::Outbox outbox(ctx_.world);
  comm::IdleWatch watch(s.liveness_seconds, comm::kPatient);  // what it feeds is buffered ahead
  comm::CreditLine to_filter(ctx_.world, filter, "Filter rank " + std::to_string(filter));
  long blocks = 0;

  while (!to_filter.stopped()) {
    outbox.retire();
    bool progress = to_filter.poll();
    if (to_filter.can_send()) {
      core::inject_faults(ctx_.cfg.faults, ctx_.me, ++blocks);
      outbox.send(source.next(), filter, comm::Tag::Tokens);
      const core::ReadPosition at = source.position();
      outbox.send(std::vector<std::int64_t>(at.begin(), at.end()), dispatcher, comm::Tag::Position);
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
  outbox.send(std::vector<std::int64_t>{source.position()[0], -1}, dispatcher, comm::Tag::Position);  // final report
  outbox.flush(comm::Deadline::after(s.liveness_seconds));
}

}  // namespace fedavg::roles
