#include "pcg/cholmod_library.hpp"

#include <stdexcept>
#include <string>

#include "mna/shared_library.hpp"

namespace pgsim {
namespace {

CholmodLibrary load() {
  const std::string soname = "libcholmod.so." + std::to_string(CHOLMOD_MAIN_VERSION);
  std::string error;
  void* handle = open_shared_library(soname, PGSIM_CHOLMOD_LIBRARY_DIR, error);
  if (handle == nullptr) throw std::runtime_error("direct solver: cannot load CHOLMOD (" + error + ")");
  CholmodLibrary lib;
#define PGSIM_CHOLMOD_RESOLVE(name)                        \
  if (!resolve_function(handle, "cholmod_" #name, lib.name)) \
    throw std::runtime_error("direct solver: " + soname + " lacks cholmod_" #name);
  PGSIM_CHOLMOD_FUNCTIONS(PGSIM_CHOLMOD_RESOLVE)
#undef PGSIM_CHOLMOD_RESOLVE
  return lib;
}

}  // namespace

const CholmodLibrary& cholmod() {
  static const CholmodLibrary lib = load();  // a failed load throws and is tried again next time
  return lib;
}

}  // namespace pgsim
