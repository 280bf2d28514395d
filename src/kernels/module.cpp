// The Python module fedavg_kernels: the fused kernels of src/kernels/ as functions on NumPy arrays, which they read
// and write in place (the arrays may be torch tensors' .numpy() views). A model calls them from python/; the
// program puts this module's folder on sys.path (core::kernels_dir).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/neg_cbow.hpp"
#include "kernels/table_blocks.hpp"

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

// ----- The building blocks of python/blocks.py (kernels/table_blocks).
namespace fedavg::kernels {
namespace {

// A C-contiguous array of dtype T with ndim dimensions (any, when ndim is -1), writeable when asked.
template <typename T> bool is_array(const py::array& a, py::ssize_t ndim, bool write = false) {
  return a.dtype().is(py::dtype::of<T>()) && (ndim < 0 || a.ndim() == ndim) && c_contiguous(a) &&
         (!write || a.writeable());
}

TableRef table_ref(py::array& table, const char* what, bool write) {
  require(is_array<float>(table, 2, write) && table.shape(0) > 0 && table.shape(1) > 0, what, "table",
          std::string("a C-contiguous float32 array of shape [rows, D]") + (write ? ", writeable" : ""));
  return {static_cast<float*>(table.mutable_data()), table.shape(0), table.shape(1)};
}

// A writeable float32 output of the given shape, or null for None (when allowed).
float* output(const py::object& obj, const char* what, const char* name, std::vector<py::ssize_t> shape) {
  if (obj.is_none()) return nullptr;
  auto a = py::cast<py::array>(obj);
  bool ok = is_array<float>(a, static_cast<py::ssize_t>(shape.size()), true);
  for (std::size_t i = 0; ok && i < shape.size(); ++i) ok = a.shape(static_cast<py::ssize_t>(i)) == shape[i];
  std::string need = "None or a C-contiguous writeable float32 array of shape [";
  for (std::size_t i = 0; i < shape.size(); ++i) need += (i ? ", " : "") + std::to_string(shape[i]);
  require(ok, what, name, need + "]");
  return static_cast<float*>(a.mutable_data());
}

const std::int64_t* ids_of(const py::array& ids) { return static_cast<const std::int64_t*>(ids.data()); }

// Runs a kernel without the GIL; its std::out_of_range (a bad id) reaches Python as IndexError.
template <typename F> auto guarded(F&& f) {
  py::gil_scoped_release free;
  return f();
}

void rows_sum_py(py::array table, py::array ids, float scale, py::array out) {
  const TableRef t = table_ref(table, "rows_sum", false);
  require(is_array<std::int64_t>(ids, 2) && ids.shape(1) > 0, "rows_sum", "ids", "a C-contiguous int64 array [n, m]");
  const std::int64_t n = ids.shape(0), m = ids.shape(1);
  float* o = output(out, "rows_sum", "out", {n, t.dim});
  require(o != nullptr, "rows_sum", "out", "an array");
  guarded([&] { rows_sum(t, ids_of(ids), n, m, scale, o); });
}

double negative_sampling_py(py::array table, py::array h, py::array target, py::array noise, float grad_scale,
                            py::object g_target, py::object g_noise, py::object grad_h) {
  const char* what = "negative_sampling";
  const TableRef t = table_ref(table, what, false);
  require(is_array<float>(h, 2) && h.shape(1) == t.dim, what, "h",
          "a C-contiguous float32 array [n, D] = [n, " + std::to_string(t.dim) + "]");
  const std::int64_t n = h.shape(0);
  require(is_array<std::int64_t>(target, 1) && target.shape(0) == n, what, "target", "a C-contiguous int64 array [n]");
  require(is_array<std::int64_t>(noise, 2) && noise.shape(0) == n, what, "noise", "a C-contiguous int64 array [n, K]");
  const std::int64_t k = noise.shape(1);
  float* gt = output(g_target, what, "g_target", {n});
  float* gn = output(g_noise, what, "g_noise", {n, k});
  float* gh = output(grad_h, what, "grad_h", {n, t.dim});
  require((gt == nullptr) == (gh == nullptr) && (gn == nullptr) == (gh == nullptr), what, "g_target, g_noise, grad_h",
          "all arrays or all None");
  const auto* hp = static_cast<const float*>(h.data());
  return guarded([&] { return negative_sampling(t, hp, ids_of(target), ids_of(noise), n, k, grad_scale, gt, gn, gh); });
}

void sgd_rows_py(py::array table, py::list grads, float step, const std::string& duplicates, py::object written) {
  const char* what = "sgd_rows";
  const TableRef t = table_ref(table, what, true);
  Duplicates rule = Duplicates::kSum;
  if (duplicates == "sqrt") rule = Duplicates::kSqrt;
  else if (duplicates == "mean") rule = Duplicates::kMean;
  else require(duplicates == "sum", what, "duplicates", "'sum', 'sqrt' or 'mean', got '" + duplicates + "'");
  bool* marks = nullptr;
  if (!written.is_none()) {
    auto flags = py::cast<py::array>(written);
    require(is_array<bool>(flags, 1, true) && flags.shape(0) == t.rows, what, "written",
            "None or a writeable bool array of one flag per row");
    marks = static_cast<bool*>(flags.mutable_data());
  }
  std::vector<py::array> keep;  // the arrays stay alive while the GIL is released
  std::vector<RowGrad> terms;
  for (const py::handle item : grads) {
    auto term = py::cast<py::tuple>(item);
    require(term.size() == 4, what, "grads", "a list of (ids, coef or None, vecs, alpha)");
    auto ids = py::cast<py::array>(term[0]), vecs = py::cast<py::array>(term[2]);
    require(is_array<float>(vecs, 2) && vecs.shape(1) == t.dim, what, "vecs",
            "a C-contiguous float32 array [n, D] = [n, " + std::to_string(t.dim) + "]");
    const std::int64_t n = vecs.shape(0);
    require(is_array<std::int64_t>(ids, -1) && n > 0 && ids.size() % n == 0 && ids.size() > 0, what, "ids",
            "a C-contiguous int64 array of n*m ids (n the rows of vecs)");
    const float* coef = nullptr;
    if (!term[1].is_none()) {
      auto c = py::cast<py::array>(term[1]);
      require(is_array<float>(c, -1) && c.size() == ids.size(), what, "coef",
              "None or a C-contiguous float32 array of one value per id");
      coef = static_cast<const float*>(c.data());
      keep.push_back(c);
    }
    terms.push_back(
        {ids_of(ids), coef, static_cast<const float*>(vecs.data()), n, ids.size() / n, py::cast<float>(term[3])});
    keep.push_back(ids);
    keep.push_back(vecs);
  }
  guarded([&] { sgd_rows(t, terms, step, rule, marks); });
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
  m.def("rows_sum", &fedavg::kernels::rows_sum_py, py::arg("table"), py::arg("ids"), py::arg("scale"), py::arg("out"),
        "out[i] = scale * the sum of the rows ids[i, :] of table [rows, D] (ids int64 [n, m], out float32 [n, D]).");
  m.def("negative_sampling", &fedavg::kernels::negative_sampling_py, py::arg("table"), py::arg("h"), py::arg("target"),
        py::arg("noise"), py::arg("grad_scale"), py::arg("g_target"), py::arg("g_noise"), py::arg("grad_h"),
        "Summed negative-sampling loss of the windows' h [n, D] against the rows of target [n] and noise [n, K] "
        "(a noise word equal to the target skipped); fills grad_scale times the derivatives by the scores, "
        "g_target [n] and g_noise [n, K], and by h, grad_h [n, D], unless all three are None. Reads the table only.");
  m.def("sgd_rows", &fedavg::kernels::sgd_rows_py, py::arg("table"), py::arg("grads"), py::arg("step"),
        py::arg("duplicates"), py::arg("written"),
        "SGD in place: each row named by grads, a list of (ids, coef or None, vecs [n, D], alpha) where row "
        "ids[i, j] gets alpha * coef[i, j] * vecs[i], gets step times its summed gradient, scaled by duplicates "
        "('sum', 'sqrt', 'mean') for a row named c times; written: None or per-row flags set for the rows written.");
}
