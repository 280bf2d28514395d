#include "bridge/interpreter.hpp"

#include <pybind11/embed.h>

#include <cstdlib>
#include <string>

#include "bridge/guard.hpp"
#include "bridge/python_error.hpp"
#include "core/paths.hpp"

namespace fedavg::bridge {

namespace py = pybind11;

struct Interpreter::Impl {
  py::scoped_interpreter guard{false};  // no Python signal handlers: signals stay with the C++ side
};

Interpreter::Interpreter(const std::filesystem::path& python_dir, int blas_threads) {
  if (!std::filesystem::is_directory(python_dir))
    throw PythonError("python folder " + python_dir.string() + " does not exist (--python DIR)");
  setenv("PYTHONUNBUFFERED", "1", 1);  // no Python output is lost when the job aborts
  setenv("PYTHONDONTWRITEBYTECODE", "1", 0);
  // Read once, when the library loads. With several ranks per core, OpenBLAS's own threads (one per core, spinning
  // on sched_yield after each call) take the cores that the learners need (docs/performance.md).
  setenv("OPENBLAS_NUM_THREADS", std::to_string(blas_threads).c_str(), 0);
  impl_ = std::make_unique<Impl>();
  detail::guarded("setting sys.path", [&] {
    const auto path = py::module_::import("sys").attr("path");
    path.attr("insert")(0, std::filesystem::absolute(python_dir).string());
    path.attr("append")(core::kernels_dir().string());  // the module fedavg_kernels, which models may import
  });
}

Interpreter::~Interpreter() {
  // Every object alive now stays out of the collections Python runs as it ends: finalizing an interpreter that
  // imported torch otherwise spends about 0.2 s of CPU on them, and the ranks wait for the slowest one at the end.
  // atexit functions, the finalizers of objects freed by reference count, and the flush of the streams still run.
  try {
    py::module_::import("gc").attr("freeze")();
  } catch (const py::error_already_set&) {  // the interpreter then ends as it would have without it
  }
}

std::string Interpreter::versions() {
  return detail::guarded("versions", [] {
    // The installed distributions' versions, read without importing them: importing torch alone takes seconds.
    const std::string python = py::str(py::module_::import("platform").attr("python_version")());
    const auto metadata = py::module_::import("importlib.metadata");
    const auto version_of = [&](const char* dist) -> std::string {
      try {
        return py::str(metadata.attr("version")(dist));
      } catch (const py::error_already_set&) {
        return "not installed";
      }
    };
    return "Python " + python + ", NumPy " + version_of("numpy") + ", torch " + version_of("torch");
  });
}

}  // namespace fedavg::bridge
