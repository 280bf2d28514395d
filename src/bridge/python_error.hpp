// Python failures, rethrown as C++ errors while the GIL is still held. No Python object escapes bridge/.
#pragma once

#include <string>

#include "core/error.hpp"

namespace fedavg::bridge {

// An exception raised in Python: what() holds "<Type>: <message>" followed by the Python traceback.
class PythonError : public core::Error {
 public:
  using core::Error::Error;
};

}  // namespace fedavg::bridge
