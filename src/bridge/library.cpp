#include "bridge/library.hpp"

#include <malloc.h>

#include <cmath>
#include <cstdint>

#include <pybind11/embed.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bridge/guard.hpp"
#include "core/error.hpp"

namespace fedavg::bridge {

namespace py = pybind11;

namespace {

py::object to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// A NumPy view of caller memory: no copy, no ownership.
template <typename T> py::array_t<T> view(const T* data, std::vector<py::ssize_t> shape) {
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = sizeof(T);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  py::capsule no_owner(data, [](void*) {});
  return py::array_t<T>(shape, strides, data, no_owner);
}

}  // namespace

std::size_t ParamShape::size() const {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

struct Library::Impl {
  py::module_ mod;
  py::object model;
};

Library::Library(Interpreter&) : impl_(std::make_unique<Impl>()) {
  // The model's temporaries (a batch's gathered rows, a chunk of the test loss) must come from the heap: above
  // glibc's initial mmap threshold each one is mapped and unmapped again, page by page, at every step, which makes
  // the steps markedly slower (docs/performance.md). glibc raises the threshold by itself only after some large
  // block happens to be freed, which depends on the strategy; this makes it deliberate, in every rank that runs
  // the model (the learners and the Dispatcher).
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  try {
    impl_->mod = detail::import_checked("engine", {"param_shapes", "create", "train_step", "test_loss", "embeddings"});
  } catch (const PythonError& e) {
    // The model's code fails to import alike on every rank that runs it: bad input, reported once, by rank 0.
    throw core::InputError(e.what());
  }
}

Library::~Library() = default;

std::vector<ParamShape> Library::param_shapes(const nlohmann::json& cfg) {
  return detail::guarded("engine.param_shapes", [&] {
    std::vector<ParamShape> out;
    for (py::handle item : py::list(impl_->mod.attr("param_shapes")(to_python(cfg)))) {
      py::tuple t = py::reinterpret_borrow<py::tuple>(item);
      out.push_back({t[0].cast<std::string>(), t[1].cast<std::vector<std::size_t>>()});
    }
    return out;
  });
}

void Library::create(const nlohmann::json& cfg, float* weights, std::size_t n, bool init) {
  detail::guarded("engine.create", [&] {
    auto w = view<float>(weights, {static_cast<py::ssize_t>(n)});
    impl_->model = impl_->mod.attr("create")(to_python(cfg), w, init);
  });
}

double Library::train_step(const std::int32_t* windows, std::size_t n, int width) {
  return detail::guarded("engine.train_step", [&] {
    auto w = view<std::int32_t>(windows, {static_cast<py::ssize_t>(n), width});
    return impl_->mod.attr("train_step")(impl_->model, w).cast<double>();
  });
}

double Library::test_loss(const std::int32_t* windows, std::size_t n, int width) {
  return detail::guarded("engine.test_loss", [&] {
    auto w = view<std::int32_t>(windows, {static_cast<py::ssize_t>(n), width});
    return impl_->mod.attr("test_loss")(impl_->model, w).cast<double>();
  });
}

std::vector<std::uint8_t> Library::get_state() {
  return detail::guarded("engine.get_state", [&] {
    if (!py::hasattr(impl_->mod, "get_state")) return std::vector<std::uint8_t>{};
    py::bytes b = impl_->mod.attr("get_state")(impl_->model);
    std::string s = b;
    return std::vector<std::uint8_t>(s.begin(), s.end());
  });
}

void Library::set_state(const std::vector<std::uint8_t>& state) {
  detail::guarded(
      "engine.set_state",
      [&] {
        if (state.empty() || !py::hasattr(impl_->mod, "set_state")) return;
        impl_->mod.attr("set_state")(impl_->model,
                                     py::bytes(reinterpret_cast<const char*>(state.data()), state.size()));
      },
      true);
}

double Library::current_lr() {
  return detail::guarded("engine.current_lr", [&] {
    if (!py::hasattr(impl_->mod, "current_lr")) return std::nan("");
    return impl_->mod.attr("current_lr")(impl_->model).cast<double>();
  });
}

void Library::plan_steps(std::int64_t steps) {
  detail::guarded("engine.plan_steps", [&] {
    if (py::hasattr(impl_->mod, "plan_steps")) impl_->mod.attr("plan_steps")(impl_->model, steps);
  });
}

void Library::at_step(std::int64_t steps) {
  detail::guarded("engine.at_step", [&] {
    if (py::hasattr(impl_->mod, "at_step")) impl_->mod.attr("at_step")(impl_->model, steps);
  });
}

WrittenRows Library::written_rows() {
  return detail::guarded("engine.written_rows", [&] {
    WrittenRows out;
    if (!py::hasattr(impl_->mod, "written_rows")) return out;
    py::object all = impl_->mod.attr("written_rows")(impl_->model);
    if (all.is_none()) return out;
    for (py::handle item : py::list(all)) {
      if (item.is_none()) {
        out.emplace_back();
        continue;
      }
      // engine.written_rows gives int32 already: no conversion on the way.
      auto a = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>::ensure(item);
      if (!a || a.ndim() != 1) throw core::Error("engine.written_rows must give 1-D arrays of row ids or None");
      std::vector<std::uint32_t> rows(static_cast<std::size_t>(a.size()));
      std::int64_t last = -1;
      for (py::ssize_t i = 0; i < a.size(); ++i) {
        const std::int64_t r = a.data()[i];
        if (r <= last)
          throw core::Error("engine.written_rows: row ids must ascend from 0, got " + std::to_string(r) + " after " +
                            std::to_string(last));
        rows[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(r);
        last = r;
      }
      out.emplace_back(std::move(rows));
    }
    return out;
  });
}

void Library::load_weights() {
  detail::guarded("engine.load_weights", [&] {
    if (py::hasattr(impl_->mod, "load_weights")) impl_->mod.attr("load_weights")(impl_->model);
  });
}

void Library::store_weights() {
  detail::guarded("engine.store_weights", [&] {
    if (py::hasattr(impl_->mod, "store_weights")) impl_->mod.attr("store_weights")(impl_->model);
  });
}

std::string Library::device() {
  return detail::guarded("engine.device", [&] {
    if (!py::hasattr(impl_->mod, "device")) return std::string("cpu");
    return impl_->mod.attr("device")(impl_->model).cast<std::string>();
  });
}

std::pair<std::string, std::string> Library::model_origin(const nlohmann::json& cfg, const std::string& bundled_dir) {
  return detail::guarded("engine.model_origin", [&] {
    if (!py::hasattr(impl_->mod, "model_origin"))
      return std::make_pair(cfg.value("model", std::string("neg")), std::string());
    py::tuple t = impl_->mod.attr("model_origin")(to_python(cfg), bundled_dir);
    return std::make_pair(t[0].cast<std::string>(), t[1].cast<std::string>());
  });
}

core::Matrix Library::embeddings() {
  return detail::guarded("engine.embeddings", [&] {
    py::array_t<float, py::array::c_style | py::array::forcecast> a = impl_->mod.attr("embeddings")(impl_->model);
    if (a.ndim() != 2)
      throw core::Error("engine.embeddings must return a 2-D array, got " + std::to_string(a.ndim()) + "-D");
    core::Matrix m;
    m.rows = static_cast<std::size_t>(a.shape(0));
    m.cols = static_cast<std::size_t>(a.shape(1));
    m.data.assign(a.data(), a.data() + a.size());
    return m;
  });
}

}  // namespace fedavg::bridge
