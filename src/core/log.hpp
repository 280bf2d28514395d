// Human-facing messages. Every line names the rank and role, so output from many ranks stays readable.
#pragma once

#include <string_view>

#include "core/rank_info.hpp"

namespace fedavg::core {

// "[fedavg] rank 3 (Learner): <msg>" on stderr, flushed.
void log_line(const RankInfo& me, std::string_view msg);

// This rank's failure line, log_line's, after flushing what stdout and stderr hold; then tells the rank's watcher
// (core/rank_watch.hpp) that the failure is reported, so it adds no line of its own when the job's end kills it.
void log_failure(const RankInfo& me, std::string_view reason);

// "fedavg_mpi: Tokenizer rank 1: <msg>" on stdout, unbuffered: what a rank other than the Dispatcher says about
// its work (stderr's "[fedavg] rank N (Role): " lines are failures).
void note(const RankInfo& me, std::string_view msg);

// "[fedavg] rank 3 (Learner) WARNING: <msg>" on stderr, flushed.
void warn(const RankInfo& me, std::string_view msg);

// "[fedavg] <who>: <msg>" on stderr, flushed: a failure of a process that is not (yet) a rank.
void log_process_line(std::string_view who, std::string_view msg);

}  // namespace fedavg::core
