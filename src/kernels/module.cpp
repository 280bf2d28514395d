// The Python module fedavg_kernels: the fused kernels of src/kernels/ as functions on NumPy arrays, which they read
// and write in place (the arrays may be torch tensors' .numpy() views). A model calls them from python/; the
// program puts this module's folder on sys.path (core::kernels_dir).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "kernels/neg_cbow.hpp"

namespace py = pybind11;

namespace fedavg::kernels {
namespace {

void require(bool ok, const char* what, const char* name, const std::string& need) {
  if (!ok) throw py::value_error(std::string("fedavg_kernels.") + what + ": " + name + " must be " + need);
}

bool c_contiguous(const py::array& a) { return (a.flags() & py::array::c_style) != 0; }

// The table [2V, D], checked: float32, C-contiguous, writeable when the kernel writes.
float* table_of(py::array& table, const char* what, bool write) {
  require(table.dtype().is(py::dtype::of<float>()) && table.ndim() == 2 && c_contiguous(table) &&
              table.shape(0) % 2 == 0 && table.shape(0) > 0 && table.shape(1) > 0 && (!write || table.writeable()),
          what, "table", std::string("a C-contiguous float32 array of shape [2V, D]") + (write ? ", writeable" : ""));
  return static_cast<float*>(table.mutable_data());
}

// Calls f with the batch typed by the ids' dtype (int32 or int64).
template <typename F>
double with_batch(py::array& table, const py::array& ids, const py::array& noise, std::int64_t window, const char* what,
                  bool write, F&& f) {
  float* t = table_of(table, what, write);
  const std::int64_t width = 2 * window + 1;
  require(window >= 1 && ids.ndim() == 2 && ids.shape(1) == width && c_contiguous(ids), what, "ids",
          "a C-contiguous int32 or int64 array of shape [n, 2*window+1] = [n, " + std::to_string(width) + "]");
  const std::int64_t n = ids.shape(0);
  require(noise.dtype().is(py::dtype::of<std::int64_t>()) && c_contiguous(noise) &&
              (n == 0 ? noise.size() == 0 : noise.size() % n == 0),
          what, "noise", "a C-contiguous int64 array of n*K words");
  const std::int64_t vocab = table.shape(0) / 2, negatives = n == 0 ? 0 : noise.size() / n;
  const auto* words = static_cast<const std::int64_t*>(noise.data());
  if (ids.dtype().is(py::dtype::of<std::int32_t>()))
    return f(NegBatch<std::int32_t>{t, vocab, table.shape(1), static_cast<const std::int32_t*>(ids.data()), words, n,
                                    window, negatives});
  require(ids.dtype().is(py::dtype::of<std::int64_t>()), what, "ids", "int32 or int64");
  return f(NegBatch<std::int64_t>{t, vocab, table.shape(1), static_cast<const std::int64_t*>(ids.data()), words, n,
                                  window, negatives});
}

Duplicates duplicates_of(const std::string& name) {
  if (name == "sum") return Duplicates::kSum;
  if (name == "sqrt") return Duplicates::kSqrt;
  if (name == "mean") return Duplicates::kMean;
  throw py::value_error("fedavg_kernels.neg_cbow_step: duplicates must be 'sum', 'sqrt' or 'mean', got '" + name + "'");
}

double loss(py::array table, py::array ids, py::array noise, std::int64_t window) {
  return with_batch(table, ids, noise, window, "neg_cbow_loss", false, [](const auto& batch) {
    py::gil_scoped_release free;
    return neg_cbow_loss(batch);
  });
}

double step(py::array table, py::array ids, py::array noise, std::int64_t window, float lr,
            const std::string& duplicates, py::object written, py::object extra, std::int64_t block) {
  const Duplicates rule = duplicates_of(duplicates);
  bool* marks = nullptr;
  if (!written.is_none()) {
    auto flags = py::cast<py::array>(written);
    require(flags.dtype().is(py::dtype::of<bool>()) && flags.ndim() == 1 && flags.shape(0) == table.shape(0) &&
                c_contiguous(flags) && flags.writeable(),
            "neg_cbow_step", "written", "None or a writeable bool array of 2V flags");
    marks = static_cast<bool*>(flags.mutable_data());
  }
  const float* counts = nullptr;
  py::array extra_array;  // keeps the array alive while the GIL is released
  if (!extra.is_none()) {
    extra_array = py::cast<py::array>(extra);
    require(extra_array.dtype().is(py::dtype::of<float>()) && extra_array.ndim() == 1 &&
                extra_array.shape(0) == table.shape(0) && c_contiguous(extra_array),
            "neg_cbow_step", "extra", "None or a float32 array of 2V counts");
    counts = static_cast<const float*>(extra_array.data());
  }
  require(block >= 0, "neg_cbow_step", "block", "0 or more");
  return with_batch(table, ids, noise, window, "neg_cbow_step", true, [&](const auto& batch) {
    py::gil_scoped_release free;
    return neg_cbow_step(batch, lr, rule, marks, counts, block);
  });
}

}  // namespace
}  // namespace fedavg::kernels

PYBIND11_MODULE(fedavg_kernels, m) {
  m.doc() = "Fused kernels of fedavg_mpi's models, on NumPy arrays in place (src/kernels/).";
  m.def("neg_cbow_loss", &fedavg::kernels::loss, py::arg("table"), py::arg("ids"), py::arg("noise"), py::arg("window"),
        "Summed negative-sampling loss of the windows ids [n, 2w+1] with noise words [n*K], on the table [2V, D] "
        "(input vectors, then output vectors). Writes nothing.");
  m.def("neg_cbow_step", &fedavg::kernels::step, py::arg("table"), py::arg("ids"), py::arg("noise"), py::arg("window"),
        py::arg("lr"), py::arg("duplicates"), py::arg("written"), py::arg("extra") = py::none(), py::arg("block") = 0,
        "One SGD step of the neg model in place on the table; returns the summed loss at the weights before the "
        "step. A loss that is not finite writes nothing. written: None, or [2V] flags set for the rows written. "
        "block > 0: steps of that many windows in turn, each at the weights the one before left. extra: None, or "
        "[2V] float32 counts added to each row's occurrences in a step before the duplicates scaling.");
}
