#include "training/finished_run.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "comm/communicator.hpp"
#include "core/checkpoint.hpp"
#include "core/error.hpp"
#include "training/progress.hpp"

namespace fedavg::training {
namespace {

// Which stop rule the checkpoint has met already, and the option that would take the run further; "" if none.
std::string limit_reached(const core::Settings& s, const core::Checkpoint& ck) {
  const auto& i = ck.info;
  const double epochs = core::epochs_trained(ck.progress, !ck.shards.empty());
  if (s.target > 0 && i.test_loss <= s.target)
    return "reached its target (test loss " + fmt("%.4f", i.test_loss) + " <= " + fmt("%g", s.target) +
           "); to train it further: --resume --target X, with X below " + fmt("%.4f", i.test_loss);
  if (s.max_rounds > 0 && i.round >= s.max_rounds)
    return "trained its max_rounds (" + std::to_string(i.round) + " rounds); to train it further: --resume " +
           "--max-rounds N, with N above " + std::to_string(i.round);
  if (s.max_seconds > 0 && i.seconds >= s.max_seconds)
    return "trained its max_seconds (" + fmt("%.1f", i.seconds) + " s); to train it further: --resume " +
           "--max-seconds S, with S above " + fmt("%.0f", i.seconds);
  if (s.max_epochs > 0 && epochs >= s.max_epochs)
    return "trained its max_epochs (" + fmt("%.2f", epochs) +
           " passes over the text); to train it further: " + "--resume --epoch N, with N above " + fmt("%.2f", epochs);
  return "";
}

// True if the run's statistics file (written last, after the embeddings) is that of the checkpoint's round: the
// run ended there and wrote its outputs. A run that stopped after its final checkpoint but before its outputs (a
// crash) is resumed as any other, and writes them.
bool outputs_written(const std::filesystem::path& stats, std::int64_t round) {
  std::ifstream in(stats);
  std::string first;
  std::getline(in, first);
  return first.rfind("final: rounds=" + std::to_string(round) + " ", 0) == 0;
}

}  // namespace

bool resumed_run_is_complete(const core::Config& cfg, const comm::Communicator& world) {
  if (!cfg.resume) return false;
  std::int64_t complete = 0;
  if (world.rank() == 0) {
    const auto path = cfg.out_dir / (cfg.settings.data_name + ".h5");
    std::string why;
    try {
      std::error_code ec;
      if (std::filesystem::is_regular_file(path, ec)) {
        const auto ck = core::read_checkpoint(path, {});
        if (outputs_written(cfg.out_dir / (cfg.settings.data_name + "_stats.txt"), ck.info.round))
          why = limit_reached(cfg.settings, ck);
      }
    } catch (const core::InputError&) {
      throw;  // a checkpoint refused as it is read: said at once, before any rank imports torch or builds a model
    } catch (const std::exception&) {
      why.clear();  // the resume reports what is wrong with it
    }
    if (!why.empty()) {
      std::printf(
          "fedavg_mpi: the run in %s is complete, nothing to resume: it %s. To train its vectors on new text, "
          "start a new run from them: --init-from %s --out NEW_FOLDER new_text.txt\n",
          cfg.out_dir.string().c_str(), why.c_str(), path.string().c_str());
      std::fflush(stdout);
      complete = 1;
    }
  }
  world.ibcast(&complete, 1, 0).wait_until(comm::Deadline::after(cfg.settings.liveness_seconds * comm::kIndirect));
  return complete != 0;
}

}  // namespace fedavg::training
