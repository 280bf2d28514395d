// What a model says of the rows its training steps wrote (engine.written_rows, docs/python_interface.md).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace fedavg::bridge {

// Per parameter, in param_shapes order: the rows (ids along its first dimension, ascending) the model's steps
// wrote, or none where the model does not say (any row may have changed). Empty when it says nothing at all.
using WrittenRows = std::vector<std::optional<std::vector<std::uint32_t>>>;

}  // namespace fedavg::bridge
