#include "core/rank_map.hpp"

#include <string>

#include "core/error.hpp"

namespace fedavg::core {
namespace {

// The advice for a job too small for its pipelines: the most pipelines its ranks can run, if any.
std::string fewer_pipelines(int world_size) {
  const int fit = (world_size - 1) / 4;
  if (fit < 1) return "";
  return ", or read the same files through fewer pipelines (--pipelines " + std::to_string(fit) + " fits -n " +
         std::to_string(world_size) + ")";
}

}  // namespace

RankMap::RankMap(int world_size, int pipelines) : world_(world_size), pipelines_(pipelines) {
  if (pipelines < 1) throw InputError("no corpus file given: usage: mpiexec -n N fedavg_mpi [options] corpus.txt ...");
  if (world_size < min_world_size(pipelines)) {
    throw InputError("too few ranks: " + std::to_string(world_size) + " ranks for " + std::to_string(pipelines) +
                     " pipeline(s) (one per corpus file unless \"pipelines\" says otherwise); each needs a "
                     "Tokenizer, Filter and Batcher, plus a Dispatcher and at least one Learner per pipeline: "
                     "run with at least -n " +
                     std::to_string(min_world_size(pipelines)) + fewer_pipelines(world_size));
  }
}

Role RankMap::role_of(int rank) const {
  if (rank == 0) return Role::Dispatcher;
  if (rank < 0 || rank >= world_) return Role::Unassigned;
  if (rank <= 3 * pipelines_) {
    switch ((rank - 1) % 3) {
      case 0: return Role::Tokenizer;
      case 1: return Role::Filter;
      default: return Role::Batcher;
    }
  }
  return Role::Learner;
}

std::vector<int> RankMap::learners_of(int pipeline) const {
  std::vector<int> out;
  for (int l = pipeline; l < learners(); l += pipelines_) out.push_back(learner_rank(l));
  return out;
}

}  // namespace fedavg::core
