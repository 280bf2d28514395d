// Internal to bridge/: runs a Python call and turns any Python exception into a C++ error.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "bridge/python_error.hpp"
#include "core/error.hpp"

namespace fedavg::bridge::detail {

// "<Type>: <message>\n<traceback>" for the active Python exception.
std::string describe(pybind11::error_already_set& e);

// The message of a ValueError, or "<file>: <reason>" for an OSError that names its file ("[Errno 2] No such file
// or directory: 'x'" reads "x: No such file or directory").
std::string input_message(pybind11::error_already_set& e);

// Throws ConfigError if the active Python exception is an engine.ConfigError.
void rethrow_config_error(pybind11::error_already_set& e);

// Throws core::InputError("FILE:LINE: SyntaxError: message: the line's code") if the active Python exception is a
// SyntaxError (or IndentationError, ...): code that does not parse (library.py, say) is bad input, the same on every
// rank that imports it, whichever call imported it.
void rethrow_syntax_error(pybind11::error_already_set& e);

// Runs f(); a Python exception becomes PythonError("<context>: <Type>: <message>\n<traceback>"), but an
// engine.ConfigError becomes ConfigError and a SyntaxError InputError. When `input_errors` is set, a
// ValueError/OSError becomes core::InputError with just its message: it reports bad input the user can fix, not a
// bug.
template <typename F> auto guarded(const std::string& context, F&& f, bool input_errors = false) {
  try {
    return std::forward<F>(f)();
  } catch (pybind11::error_already_set& e) {
    rethrow_config_error(e);
    rethrow_syntax_error(e);
    if (input_errors && (e.matches(PyExc_ValueError) || e.matches(PyExc_OSError)))
      throw core::InputError(input_message(e));
    throw PythonError(context + ": " + describe(e));
  }
}

// Imports `module` and checks that it defines every name in `required`; one error lists all missing ones.
pybind11::module_ import_checked(const char* module, std::initializer_list<const char*> required);

}  // namespace fedavg::bridge::detail
