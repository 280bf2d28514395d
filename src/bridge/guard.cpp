#include "bridge/guard.hpp"

namespace fedavg::bridge::detail {

namespace py = pybind11;

namespace {

// "FILE:LINE: SyntaxError: message: the line's code" for a SyntaxError (or IndentationError, ...), whose Python
// report spreads over several lines; empty for any other exception.
std::string syntax_error_line(py::error_already_set& e) {
  if (!e.matches(PyExc_SyntaxError)) return {};
  const py::object v = e.value();
  const auto text_of = [&](const char* name) {
    const py::object a = py::getattr(v, name, py::none());
    return a.is_none() ? std::string() : std::string(py::str(a));
  };
  std::string code = text_of("text");
  code.erase(0, code.find_first_not_of(" \t"));
  while (!code.empty() && (code.back() == '\n' || code.back() == ' ')) code.pop_back();
  std::string line = text_of("filename") + ":" + text_of("lineno") + ": " +
                     std::string(py::str(e.type().attr("__name__"))) + ": " + text_of("msg");
  return code.empty() ? line : line + ": " + code;
}

}  // namespace

std::string input_message(py::error_already_set& e) {
  const py::object v = e.value();
  if (e.matches(PyExc_OSError)) {
    const py::object file = py::getattr(v, "filename", py::none()), why = py::getattr(v, "strerror", py::none());
    if (!file.is_none() && !why.is_none()) return std::string(py::str(file)) + ": " + std::string(py::str(why));
  }
  return py::str(v);
}

void rethrow_syntax_error(py::error_already_set& e) {
  const std::string syntax = syntax_error_line(e);
  if (!syntax.empty()) throw core::InputError(syntax);
}

void rethrow_config_error(py::error_already_set& e) {
  if (!e.matches(PyExc_ValueError)) return;
  const py::object v = e.value();
  if (std::string(py::str(e.type().attr("__name__"))) != "ConfigError" || !py::hasattr(v, "key") ||
      !py::hasattr(v, "message"))
    return;
  throw ConfigError(py::str(v.attr("key")), py::str(v.attr("message")));
}

std::string describe(py::error_already_set& e) {
  try {
    py::module_ tb = py::module_::import("traceback");
    py::list lines = tb.attr("format_exception")(e.type(), e.value(), e.trace());
    // Put "Type: message" first so the one-line report says what happened; the traceback follows.
    py::list last_line = tb.attr("format_exception_only")(e.type(), e.value());
    std::string head = syntax_error_line(e);
    if (head.empty()) head = py::str(py::str("").attr("join")(last_line));
    while (!head.empty() && head.back() == '\n') head.pop_back();
    std::string body = py::str(py::str("").attr("join")(lines));
    while (!body.empty() && body.back() == '\n') body.pop_back();
    return head + "\n" + body;
  } catch (py::error_already_set&) {
    return e.what();
  }
}

py::module_ import_checked(const char* module, std::initializer_list<const char*> required) {
  py::module_ m = guarded(std::string("import ") + module, [&] { return py::module_::import(module); });
  std::string missing;
  for (const char* name : required) {
    if (!py::hasattr(m, name) || !PyCallable_Check(m.attr(name).ptr()))
      missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
  if (!missing.empty()) {
    std::string file = py::hasattr(m, "__file__") ? std::string(py::str(m.attr("__file__"))) : module;
    throw PythonError(file + " lacks required function(s): " + missing);
  }
  return m;
}

}  // namespace fedavg::bridge::detail
