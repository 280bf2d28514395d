// Owns the embedded Python interpreter of this rank. Build it after comm::Environment so it is destroyed first.
// Python runs unbuffered and sees `python_dir` first on sys.path. The BLAS library that NumPy and torch load
// starts `blas_threads` threads (OPENBLAS_NUM_THREADS, unless the environment already sets it): by default
// OpenBLAS starts one per core, whatever torch.set_num_threads says, and they spin between calls.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

namespace fedavg::bridge {

class Interpreter {
 public:
  // Throws bridge::PythonError if Python cannot start or python_dir does not exist.
  Interpreter(const std::filesystem::path& python_dir, int blas_threads);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  // "Python 3.11.2, NumPy 1.24.2, torch 1.13.1" (imports torch).
  std::string versions();
  Interpreter& operator=(const Interpreter&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fedavg::bridge
