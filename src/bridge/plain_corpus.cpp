#include "bridge/plain_corpus.hpp"

#include <pybind11/embed.h>

#include "bridge/guard.hpp"
#include "core/error.hpp"

namespace fedavg::bridge {

namespace py = pybind11;

PlainCorpus::PlainCorpus(Interpreter&) {}

std::optional<std::string> PlainCorpus::path(const std::string& corpus, const std::filesystem::path& cache_dir) {
  return detail::guarded("runtime.decompress.plain_path", [&]() -> std::optional<std::string> {
    py::module_ mod = detail::import_checked("runtime.decompress", {"plain_path"});
    const py::object plain = mod.attr("plain_path")(corpus, cache_dir.string());
    if (plain.is_none()) return std::nullopt;
    return plain.cast<std::string>();
  });
}

void PlainCorpus::ensure(const std::string& corpus, const std::filesystem::path& cache_dir) {
  try {
    detail::guarded(
        "runtime.decompress.ensure_plain",
        [&] {
          py::module_ mod = detail::import_checked("runtime.decompress", {"ensure_plain"});
          mod.attr("ensure_plain")(corpus, cache_dir.string());
        },
        true);
  } catch (const core::CorpusError&) {
    throw;
  } catch (const core::InputError& e) {
    throw core::CorpusError(e.what());
  }
}

}  // namespace fedavg::bridge
