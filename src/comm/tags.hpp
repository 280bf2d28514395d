// Every message tag in the program. docs/protocol.md mirrors this file; change both together.
#pragma once

namespace fedavg::comm {

enum class Tag : int {
  Tokens = 10,        // Tokenizer -> Filter: int32 token ids of whole lines, with BREAK/OOV/EOF markers
  Windows = 11,       // Filter -> Batcher: int32 [n, 2w+1] windows
  Credit = 12,        // Filter -> Tokenizer, Batcher -> Filter: int32 number of blocks the receiver may send
  Request = 13,       // Learner -> Batcher: int64 number of windows wanted
  Batch = 14,         // Batcher -> Learner: int32 [n, 2w+1] windows answering one Request
  RoundDone = 15,     // Learner -> Dispatcher: int64 round the learner finished training
  Ready = 16,         // Learner -> Dispatcher: int64 round whose Control the learner received
  Position = 17,      // Tokenizer -> Dispatcher: int64 [byte offset, passes] of its next block
  ResumeFrom = 18,    // Dispatcher -> Tokenizer (with --resume): int64 [byte offset, passes] to start from
  LearnerState = 19,  // Learner <-> Dispatcher: uint8 opaque model state (optimizer, RNG) for checkpoints
  PeriodDone = 20,    // Learner -> Dispatcher (easgd, hogwild): double [windows, windows * mean train loss] of a period
  Push = 21,          // Learner -> Dispatcher (easgd): float [params] the learner's weights after that period
  Answer = 22,        // Dispatcher -> Learner (easgd, hogwild): int64 [command, round, send_state] answering a period
  ElasticStep = 23,   // Dispatcher -> Learner (easgd): float [params] alpha (x_i - centre), after a Train answer
  Average = 24,      // Learner -> parent learner or Dispatcher (fedavg, bmuf; learner comm.): float [params], tree sums
  Cut = 25,          // Dispatcher -> Learner (balance_rounds): int64 round whose training ends after the current step
  PassWindows = 26,  // Filter -> Dispatcher: int64 windows the Filter made in a pass over its corpus file
  RowDelta = 27,     // Learner -> owning learner, or Dispatcher (bmuf) (sparse exchange): uint8 rows to be summed
  Shard = 28,        // Dispatcher -> Tokenizer (shards): int64 [shard, file, begin, end, epoch] a shard to read
  ShardDone = 29,    // Tokenizer -> Dispatcher (shards): int64 [shard, epoch] read all of it; asks for the next
  RowGlobal = 30,    // Learner -> all (or Dispatcher -> tree, bmuf) (sparse exchange): uint8 rows added to the weights
  Weights = 31,      // Dispatcher -> learner 1 -> its children (learner comm.): float [params], down the tree
  ReduceScatter = 32,  // Learner -> next learner in the ring (bsp; learner comm.): float partial sums of a segment
  Allgather = 33,      // Learner -> next learner in the ring and Dispatcher (bsp; learner comm.): a segment's sum
  RowRelay = 34,       // Learner -> its host's members (sparse exchange): uint8 another host's RowGlobal, passed on
  // On the wait chain's own communicator (comm/wait_chain.hpp), asked by a rank about to blame a peer for a stall:
  WaitQuery = 40,    // any rank -> a rank it waits on: int64 [question, 0, 0, 0]
  WaitAnswer = 41,   // that rank -> the asker, between its polls: int64 [question, rank it waits on, us, sending]
  Shutdown = 98,     // downstream -> upstream: stop producing (empty)
  ShutdownAck = 99,  // upstream -> downstream: nothing more will follow (empty)
};

constexpr int tag_value(Tag t) { return static_cast<int>(t); }

}  // namespace fedavg::comm
