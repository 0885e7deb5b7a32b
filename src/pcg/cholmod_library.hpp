#pragma once
// CHOLMOD, loaded when first used (mna/shared_library.hpp says why): only --solver direct, the
// transient's direct factor and factor_entries call it, and linking it made every pgsim process
// load it with LAPACK and BLAS.
#include <cholmod.h>

namespace pgsim {

// The functions pgsim calls, named without their "cholmod_" prefix: cholmod().analyze(...).
#define PGSIM_CHOLMOD_FUNCTIONS(X) \
  X(start) X(finish) X(analyze) X(factorize) X(change_factor) X(solve2) X(free_factor) X(free_dense)

struct CholmodLibrary {
#define PGSIM_CHOLMOD_POINTER(name) decltype(&::cholmod_##name) name = nullptr;
  PGSIM_CHOLMOD_FUNCTIONS(PGSIM_CHOLMOD_POINTER)
#undef PGSIM_CHOLMOD_POINTER
};

// The CHOLMOD of the headers pgsim was built with (libcholmod.so.<CHOLMOD_MAIN_VERSION>, searched
// as dlopen does, then in the folder the build found it in), loaded once and never closed;
// thread-safe. std::runtime_error when it cannot be loaded or lacks one of the functions.
const CholmodLibrary& cholmod();

}  // namespace pgsim
