// Who a stalled wait blames. Waits form chains (a learner waits on its Batcher, which waits on its Filter, which
// waits on its Tokenizer, which waits on the Dispatcher), so before a rank names the peer it waits on, it asks
// that peer what it waits on itself; every wait polls, and between its polls a rank answers (docs/architecture.md,
// "Who a stall is blamed on").
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/tags.hpp"
#include "comm/wait_policy.hpp"

namespace fedavg::comm {

// A peer's answer: the world rank it waits on (WaitChain::kAnyone: one of several), for how long, and whether
// for a message of its own to leave (a send that has not completed).
struct WaitAnswer {
  int waits_on;
  double seconds;
  bool sending;
};

// The process's wait chain: a communicator of its own (MPI_COMM_WORLD duplicated), what this rank waits on now,
// and the queries it has sent. Only the main thread uses it (MPI_THREAD_FUNNELED). It is the one process-wide
// registration of the program (CONTRIBUTING.md): every wait must answer, and most waits are far from any object
// they could be handed.
class WaitChain {
 public:
  static constexpr int kAnyone = -1;

  // Collective over MPI_COMM_WORLD. Makes this the chain every wait of this process answers and asks through, until
  // it is destroyed; at most one at a time.
  WaitChain();
  ~WaitChain();
  WaitChain(const WaitChain&) = delete;
  WaitChain& operator=(const WaitChain&) = delete;

  // The chain in force, or null (before main() made one, and in unit tests that make none).
  static WaitChain* active();

  // While alive, this rank answers that it waits on `peer` (a world rank, or kAnyone), since it was made, and
  // whether for a send. Nests: the innermost wait is the one answered.
  class Waiting {
   public:
    explicit Waiting(int peer, bool sending = false);
    ~Waiting();
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    WaitChain* chain_;
    int peer_before_;
    bool sending_before_ = false;
    Clock::time_point since_before_;
  };

  int rank() const { return rank_; }
  // Whether this rank's innermost wait is for a send.
  bool sending() const { return sending_; }
  int size() const { return static_cast<int>(asked_.size()); }
  // Answers every query that has arrived, takes every answer, and releases sent messages. Never waits.
  void serve();
  // Asks `peer` what it waits on; forgets the answer to any earlier question to it.
  void ask(int peer);
  // `peer`'s answer to the last ask(peer), once it has come.
  std::optional<WaitAnswer> answer(int peer) const;

 private:
  using Wire = std::array<std::int64_t, 4>;  // question, rank waited on, microseconds waited, sending
  struct Sent {
    MPI_Request request;
    std::unique_ptr<Wire> wire;
  };
  void send(Wire wire, int dest, int tag);
  // Receives the next message `tag` that has arrived, if any, from `from`.
  bool take(Tag tag, int& from, Wire& wire);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = -1;
  int waits_on_ = kAnyone;
  bool sending_ = false;
  Clock::time_point since_ = Clock::now();
  std::int64_t next_question_ = 1;
  // By peer: the number of the last question asked (0: none), and its answer once it came.
  std::deque<std::int64_t> asked_;
  std::deque<std::optional<WaitAnswer>> answers_;
  std::deque<Sent> sent_;
};

// The verdict of one wait at its liveness deadline, from what the ranks it waits on (its peers: one of them, or
// all) answer when asked:
//   - a peer that does not answer within a grace is stalled: the wait fails, naming it;
//   - a peer that waits on another rank is followed: that rank is asked in turn, and so on. A chain that comes back
//     to a rank already in it (this one included) is a cycle of ranks waiting on each other: a message between two
//     of them is late. The wait fails, naming the rank of the cycle that waits for a send of its own to leave (its
//     link is the slow one), else the last rank the chain reached. A chain that ends at a rank that does not
//     answer, or that waits on several, leaves the verdict to the ranks that wait on that end directly, with their
//     own limits: the wait goes on, up to kMaxExtensions times its limit.
// Without a chain, or peers, the deadline is final. A failure names the stalled ranks as "stalled at rank(s) N"
// (scripts/supervise.py leaves out their host).
class Verdict {
 public:
  static constexpr int kMaxExtensions = 3;
  // A waiting rank answers within milliseconds; a busy machine or a loaded link takes longer.
  static constexpr double kGraceShare = 0.25;
  static constexpr double kMinGraceSeconds = 0.5;

  // `sending`: this wait is for a send of this rank's to leave.
  Verdict(std::vector<int> peers, double seconds, bool sending = false);
  // Called when the wait's deadline has passed: returns the new deadline if the wait goes on, or nullopt if it
  // must fail now; `why` then holds what to add to the failure ("" for nothing).
  std::optional<Clock::time_point> at_deadline(std::string& why);

 private:
  Clock::time_point ask(int rank);
  // The peers' answers are in: a failure, or "" and, if a peer waits on another rank, that peer in `via` and the
  // rank in `next` (else -1 in both).
  std::string judge_peers(int& via, int& next) const;
  // The followed rank's answer is in: a failure, or "" and the chain's next rank (-1: the chain ends) in `next`.
  std::string judge_followed(int& next) const;
  // The failure for the cycle the chain closes at `on`.
  std::string cycle(int on) const;
  bool sending(int rank) const;
  std::optional<Clock::time_point> extend(std::string& why);
  std::string chain_text() const;

  WaitChain* chain_;
  std::vector<int> peers_;
  double seconds_;
  bool sending_;
  int extensions_ = 0;
  bool asked_peers_ = false;
  std::vector<int> followed_;  // the chain: the peer it goes on from, then the ranks asked in turn
  Clock::time_point asked_at_{};
};

}  // namespace fedavg::comm
