// The rank -> role formula. Rank 0 is the Dispatcher; pipeline p owns ranks 1+3p (Tokenizer), 2+3p (Filter),
// 3+3p (Batcher); every later rank is a Learner, and learner l reads from pipeline l mod P.
#pragma once

#include <string>
#include <vector>

#include "core/rank_info.hpp"

namespace fedavg::core {

class RankMap {
 public:
  // Throws InputError naming the smallest world size that works when `world_size` is too small.
  RankMap(int world_size, int pipelines);

  static int min_world_size(int pipelines) { return 4 * pipelines + 1; }

  int world_size() const { return world_; }
  int pipelines() const { return pipelines_; }
  int learners() const { return world_ - 1 - 3 * pipelines_; }

  Role role_of(int rank) const;
  static constexpr int dispatcher() { return 0; }
  int tokenizer(int pipeline) const { return 1 + 3 * pipeline; }
  int filter(int pipeline) const { return 2 + 3 * pipeline; }
  int batcher(int pipeline) const { return 3 + 3 * pipeline; }
  // Pipeline index of a Tokenizer, Filter or Batcher rank.
  int pipeline_of_stage(int rank) const { return (rank - 1) / 3; }

  int learner_rank(int learner) const { return 1 + 3 * pipelines_ + learner; }
  int learner_index(int rank) const { return rank - 1 - 3 * pipelines_; }
  int pipeline_of_learner(int learner) const { return learner % pipelines_; }
  // How many learners read pipeline `pipeline` (those whose pipeline_of_learner it is).
  int learners_of_pipeline(int pipeline) const {
    return learners() / pipelines_ + (pipeline < learners() % pipelines_ ? 1 : 0);
  }
  // World ranks of the learners that read from `pipeline`, in learner order.
  std::vector<int> learners_of(int pipeline) const;

  // The map as a job's OUT/NAME_ranks.json holds it: world_size, pipelines, and "ranks", one object per rank in
  // rank order with its rank, role, host (`hosts`, by rank: the name each rank's host gave), and the pipeline of a
  // Tokenizer, Filter or Batcher or the learner index and pipeline of a Learner. One rank a line.
  std::string to_json(const std::vector<std::string>& hosts) const;

 private:
  int world_;
  int pipelines_;
};

}  // namespace fedavg::core
