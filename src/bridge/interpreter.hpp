// Owns the embedded Python interpreter of this rank. Build it after comm::Environment so it is destroyed first.
// Python runs unbuffered and sees `python_dir` first on sys.path.
#pragma once

#include <filesystem>
#include <memory>

namespace fedavg::bridge {

class Interpreter {
 public:
  // Throws bridge::PythonError if Python cannot start or python_dir does not exist.
  explicit Interpreter(const std::filesystem::path& python_dir);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fedavg::bridge
