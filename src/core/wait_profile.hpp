// The profile of waiting ranks that cfg.json asks for ("wait_profile"): the one setting comm::WaitPolicy reads.
#pragma once

namespace fedavg::core {

// How waiting ranks sleep (comm::WaitPolicy).
enum class WaitProfile { Auto, Plain, Oversubscribed };

}  // namespace fedavg::core
