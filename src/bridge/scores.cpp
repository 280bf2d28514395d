#include "bridge/scores.hpp"

#include <pybind11/embed.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bridge/guard.hpp"

namespace fedavg::bridge {

namespace py = pybind11;

struct Scores::Impl {
  py::object scorer;  // evaluate.Scorer
};

Scores::Scores(Interpreter&, const std::vector<std::string>& words, const std::filesystem::path& similarity,
               const std::filesystem::path& analogies)
    : impl_(std::make_unique<Impl>()) {
  py::module_ mod = detail::import_checked("evaluate", {"Scorer"});
  auto path_or_none = [](const std::filesystem::path& p) -> py::object {
    if (p.empty()) return py::none();
    return py::str(p.string());
  };
  detail::guarded(
      "evaluate.Scorer",
      [&] { impl_->scorer = mod.attr("Scorer")(words, path_or_none(similarity), path_or_none(analogies)); }, true);
}

Scores::~Scores() = default;

Scores::Result Scores::score(const core::Matrix& embeddings) {
  return detail::guarded("evaluate.Scorer", [&] {
    // A view of the C++ matrix: no copy; the call only reads it.
    py::array_t<float> view({embeddings.rows, embeddings.cols}, embeddings.data.data(), py::none());
    py::tuple r = impl_->scorer(view);
    return Result{r[0].cast<double>(), r[1].cast<double>()};
  });
}

}  // namespace fedavg::bridge
