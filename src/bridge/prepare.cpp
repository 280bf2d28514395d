#include "bridge/prepare.hpp"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include "bridge/guard.hpp"
#include "core/error.hpp"

namespace fedavg::bridge {

namespace py = pybind11;

Prepare::Prepare(Interpreter&) {}

std::string Prepare::run(const std::vector<std::string>& corpora, const std::filesystem::path& out,
                         const nlohmann::json& options) {
  try {
    return detail::guarded(
        "prepare.prepare_job",
        [&] {
          py::module_ mod = detail::import_checked("prepare", {"prepare_job"});
          py::object opts = py::module_::import("json").attr("loads")(options.dump());
          return mod.attr("prepare_job")(corpora, out.string(), opts).cast<std::string>();
        },
        true);
  } catch (const core::InputError& e) {
    throw core::InputError(std::string("preparing the config from the corpora: ") + e.what());
  }
}

}  // namespace fedavg::bridge
