#pragma once
// A shared library opened when a run first needs it, not at the process's start. Libraries that
// only some runs use (cuSPARSE for --spmv cusparse, CHOLMOD for --solver direct) cost every other
// run their loading, relocation and initialisers when linked (issue 13): CHOLMOD brings LAPACK and
// BLAS, and where BLAS is OpenBLAS its initialiser starts a thread per core, 7 of an empty
// program's 8 ms on the H100 machine.
#include <dlfcn.h>

#include <string>
#include <type_traits>

namespace pgsim {

// `soname` opened as dlopen searches (the executable's run path included), else from
// `fallback_dir` (the folder the build found it in; skipped when empty), RTLD_NOW | RTLD_LOCAL,
// never closed. nullptr when neither opens, with `error` set to dlopen's first message.
void* open_shared_library(const std::string& soname, const std::string& fallback_dir, std::string& error);

// `pointer` set to the function `name` of `handle`; false, and `pointer` untouched, when absent.
template <class Function>
bool resolve_function(void* handle, const char* name, Function*& pointer) {
  static_assert(std::is_function_v<Function>);
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) return false;
  pointer = reinterpret_cast<Function*>(symbol);
  return true;
}

}  // namespace pgsim
