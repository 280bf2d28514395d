#include "comm/wait_chain.hpp"

#include <algorithm>
#include <sstream>
#include <utility>

#include "comm/error.hpp"
#include "comm/tags.hpp"
#include "comm/wait.hpp"

namespace fedavg::comm {
namespace {

WaitChain* g_active = nullptr;  // the one process-wide registration (see the header)

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

WaitChain::WaitChain() {
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup wait chain");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  int size = 0;
  check_mpi(MPI_Comm_size(comm_, &size), "MPI_Comm_size");
  asked_.assign(static_cast<std::size_t>(size), 0);
  answers_.resize(static_cast<std::size_t>(size));
  if (g_active == nullptr) g_active = this;
}

WaitChain::~WaitChain() {
  if (g_active == this) g_active = nullptr;
  // Answers and questions still in flight are small and sent eagerly; their buffers are left to them.
  for (auto& s : sent_) {
    int done = 0;
    MPI_Test(&s.request, &done, MPI_STATUS_IGNORE);
    if (!done) {
      MPI_Request_free(&s.request);
      (void)s.wire.release();
    }
  }
  MPI_Comm_free(&comm_);
}

WaitChain* WaitChain::active() { return g_active; }

WaitChain::Waiting::Waiting(int peer, bool sending) : chain_(g_active), peer_before_(kAnyone) {
  if (chain_ == nullptr) return;
  peer_before_ = std::exchange(chain_->waits_on_, peer);
  sending_before_ = std::exchange(chain_->sending_, sending);
  since_before_ = std::exchange(chain_->since_, Clock::now());
}

WaitChain::Waiting::~Waiting() {
  if (chain_ == nullptr) return;
  chain_->waits_on_ = peer_before_;
  chain_->sending_ = sending_before_;
  chain_->since_ = since_before_;
}

void WaitChain::send(Wire wire, int dest, int tag) {
  Sent s{MPI_REQUEST_NULL, std::make_unique<Wire>(wire)};
  check_mpi(MPI_Isend(s.wire->data(), static_cast<int>(s.wire->size()), MPI_INT64_T, dest, tag, comm_, &s.request),
            "MPI_Isend wait chain");
  sent_.push_back(std::move(s));
}

bool WaitChain::take(Tag tag, int& from, Wire& wire) {
  int flag = 0;
  MPI_Status st;
  check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag_value(tag), comm_, &flag, &st), "MPI_Iprobe wait chain");
  if (!flag) return false;
  check_mpi(MPI_Recv(wire.data(), static_cast<int>(wire.size()), MPI_INT64_T, st.MPI_SOURCE, st.MPI_TAG, comm_,
                     MPI_STATUS_IGNORE),
            "MPI_Recv wait chain");
  from = st.MPI_SOURCE;
  return true;
}

void WaitChain::serve() {
  int from = 0;
  Wire w{};
  while (take(Tag::WaitQuery, from, w)) {
    const auto waited_us = static_cast<std::int64_t>(seconds_since(since_) * 1e6);
    send({w[0], waits_on_, waited_us, sending_ ? 1 : 0}, from, tag_value(Tag::WaitAnswer));
  }
  while (take(Tag::WaitAnswer, from, w)) {
    const auto f = static_cast<std::size_t>(from);
    if (w[0] == asked_[f]) answers_[f] = WaitAnswer{static_cast<int>(w[1]), static_cast<double>(w[2]) / 1e6, w[3] != 0};
  }
  while (!sent_.empty()) {
    int done = 0;
    check_mpi(MPI_Test(&sent_.front().request, &done, MPI_STATUS_IGNORE), "MPI_Test wait chain");
    if (!done) break;
    sent_.pop_front();
  }
}

void WaitChain::ask(int peer) {
  const auto p = static_cast<std::size_t>(peer);
  asked_[p] = next_question_++;
  answers_[p].reset();
  send({asked_[p], 0, 0, 0}, peer, tag_value(Tag::WaitQuery));
}

std::optional<WaitAnswer> WaitChain::answer(int peer) const { return answers_[static_cast<std::size_t>(peer)]; }

Verdict::Verdict(std::vector<int> peers, double seconds, bool sending)
    : chain_(WaitChain::active()), seconds_(seconds), sending_(sending) {
  for (int p : peers)
    if (chain_ != nullptr && p >= 0 && p != chain_->rank()) peers_.push_back(p);
}

Clock::time_point Verdict::ask(int rank) {
  chain_->ask(rank);
  asked_at_ = Clock::now();
  return Deadline::after(std::max(kMinGraceSeconds, kGraceShare * seconds_)).at;
}

std::optional<Clock::time_point> Verdict::at_deadline(std::string& why) {
  why.clear();
  if (peers_.empty()) return std::nullopt;
  if (!asked_peers_) {
    Clock::time_point until{};
    for (int p : peers_) until = ask(p);
    asked_peers_ = true;
    return until;
  }
  chain_->serve();
  int via = -1, next = -1;
  why = followed_.empty() ? judge_peers(via, next) : judge_followed(next);
  if (!why.empty()) return std::nullopt;
  if (next < 0 || static_cast<int>(followed_.size()) > chain_->size()) return extend(why);
  if (via >= 0) followed_.push_back(via);  // the peer the chain goes on from
  followed_.push_back(next);
  return ask(next);
}

std::string Verdict::judge_peers(int& via, int& next) const {
  std::string silent;
  int count = 0;
  for (int p : peers_)
    if (!chain_->answer(p)) silent += (count++ == 0 ? "" : ", ") + std::to_string(p);
  std::ostringstream os;
  os.precision(1);
  if (count > 0) {
    os << "; stalled at rank(s) " << silent
       << (count == 1 ? ", which does not answer what it waits on" : ", which do not answer what they wait on")
       << " (asked " << std::fixed << seconds_since(asked_at_) << " s before)";
    return os.str();
  }
  for (int p : peers_) {
    const int on = chain_->answer(p)->waits_on;
    if (on == chain_->rank()) {
      // A message between the two is late: the one whose send has not left is stalled.
      const int stalled = sending_ && !chain_->answer(p)->sending ? chain_->rank() : p;
      os << "; stalled at rank(s) " << stalled << ": rank " << p
         << " waits on this rank in turn (a message between them is late)";
      return os.str();
    }
    if (on != WaitChain::kAnyone && via < 0) {
      via = p;
      next = on;
    }
  }
  return "";
}

std::string Verdict::judge_followed(int& next) const {
  const int last = followed_.back();
  const auto a = chain_->answer(last);
  if (!a || a->waits_on == WaitChain::kAnyone) return "";  // its direct waiters judge it, with their own limits
  const int on = a->waits_on;
  const bool seen = on == chain_->rank() || std::find(followed_.begin(), followed_.end(), on) != followed_.end();
  if (!seen) {
    next = on;
    return "";
  }
  return cycle(on);
}

bool Verdict::sending(int rank) const {
  if (rank == chain_->rank()) return sending_;
  const auto a = chain_->answer(rank);
  return a && a->sending;
}

std::string Verdict::cycle(int on) const {
  // The cycle: from `on` (this rank, or a rank of followed_) to the end of followed_.
  std::vector<int> ring;
  const auto from = std::find(followed_.begin(), followed_.end(), on);
  if (from == followed_.end()) ring.push_back(chain_->rank());
  ring.insert(ring.end(), from == followed_.end() ? followed_.begin() : from, followed_.end());
  int stalled = followed_.back();
  for (int r : ring)
    if (sending(r)) {
      stalled = r;
      break;
    }
  std::ostringstream os;
  os << "; stalled at rank(s) " << stalled << ": the waits " << chain_text() << " -> " << on
     << " form a cycle (a message between two of them is late";
  if (sending(stalled)) os << ": rank " << stalled << " waits for its own to leave";
  os << ")";
  return os.str();
}

std::optional<Clock::time_point> Verdict::extend(std::string& why) {
  if (extensions_ == kMaxExtensions) {
    std::ostringstream os;
    os << "; the ranks it waits on were still waiting, in turn, after " << (extensions_ + 1) * seconds_ << " s";
    why = os.str();
    return std::nullopt;
  }
  ++extensions_;
  asked_peers_ = false;
  followed_.clear();
  return Deadline::after(seconds_).at;
}

std::string Verdict::chain_text() const {
  std::string text = std::to_string(chain_->rank());
  for (int r : followed_) text += " -> " + std::to_string(r);
  return text;
}

}  // namespace fedavg::comm
