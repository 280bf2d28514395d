#include "bridge/text.hpp"

#include <pybind11/embed.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bridge/guard.hpp"
#include "core/error.hpp"

namespace fedavg::bridge {

namespace py = pybind11;

struct Text::Impl {
  py::module_ mod;
  py::object vocab;      // Python list of words, as loaded
  py::object tokenizer;  // textpipe.Tokenizer over `vocab`
};

Text::Text(Interpreter&) : impl_(std::make_unique<Impl>()) {
  impl_->mod = detail::import_checked("textpipe", {"load_vocab", "load_test", "Tokenizer"});
}

Text::~Text() = default;

core::Vocabulary Text::load_vocab(const std::filesystem::path& path) {
  return detail::guarded(
      "textpipe.load_vocab",
      [&] {
        py::tuple res = impl_->mod.attr("load_vocab")(path.string());
        core::Vocabulary v;
        v.words = res[0].cast<std::vector<std::string>>();
        if (!res[1].is_none()) v.counts = res[1].cast<std::vector<std::int64_t>>();
        impl_->vocab = res[0];
        impl_->tokenizer = impl_->mod.attr("Tokenizer")(impl_->vocab);
        return v;
      },
      true);
}

std::vector<std::int32_t> Text::load_test(const std::filesystem::path& path, int window) {
  if (!impl_->vocab) throw core::Error("Text::load_test called before load_vocab");
  return detail::guarded(
      "textpipe.load_test",
      [&] {
        py::array_t<std::int32_t, py::array::c_style | py::array::forcecast> a = impl_->mod.attr(
            "load_test")(path.string(), impl_->vocab, window);
        return std::vector<std::int32_t>(a.data(), a.data() + a.size());
      },
      true);
}

void Text::tokenize(const char* data, std::size_t size, std::vector<std::int32_t>& out) {
  detail::guarded("textpipe.Tokenizer.tokenize", [&] {
    py::memoryview view = py::memoryview::from_memory(data, static_cast<py::ssize_t>(size));
    py::array_t<std::int32_t, py::array::c_style | py::array::forcecast> ids = impl_->tokenizer.attr("tokenize")(view);
    out.insert(out.end(), ids.data(), ids.data() + ids.size());
  });
}

}  // namespace fedavg::bridge
