// Python failures, rethrown as C++ errors while the GIL is still held. No Python object escapes bridge/.
#pragma once

#include <string>
#include <utility>

#include "core/error.hpp"

namespace fedavg::bridge {

// An exception raised in Python: what() holds "<Type>: <message>" followed by the Python traceback.
class PythonError : public core::Error {
 public:
  using core::Error::Error;
};

// A cfg value the model refused (engine.ConfigError): what() says what is wrong, key() names the cfg.json key,
// so that the caller can name where it was set.
class ConfigError : public core::Error {
 public:
  ConfigError(std::string key, const std::string& message) : core::Error(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

}  // namespace fedavg::bridge
