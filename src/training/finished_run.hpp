// --resume of a run that is already complete: a limit of its settings (or its target) was reached at its last
// checkpoint, and its outputs were written after it, so there is nothing to continue. Rank 0 says so, and how to train
// it further; every rank then ends at once, with status 0, before any model is built.
#pragma once

#include "core/config.hpp"

namespace fedavg::comm {
class Communicator;
}

namespace fedavg::training {

// Collective over `world` when cfg.resume (false at once otherwise): true when the run in cfg.out_dir is complete,
// after rank 0 has printed why. A checkpoint that cannot be read is left for the resume to report.
bool resumed_run_is_complete(const core::Config& cfg, const comm::Communicator& world);

}  // namespace fedavg::training
