#include "gpu/cusparse_library.hpp"

#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "gpu/cuda_check.hpp"

namespace pgsim::gpu {
namespace {

void* open_library() {
  const std::string soname = "libcusparse.so." + std::to_string(CUSPARSE_VER_MAJOR);
  if (void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  const std::string first_error = dlerror();
  // Not on the search path (no ld.so.conf entry for the toolkit): the folder the build linked against.
  if (void* handle = dlopen((std::string(PGSIM_CUDA_LIBRARY_DIR) + "/" + soname).c_str(), RTLD_NOW | RTLD_LOCAL))
    return handle;
  throw GpuError("cannot load cuSPARSE: " + first_error);
}

CusparseLibrary load() {
  void* handle = open_library();
  CusparseLibrary lib;
  const auto resolve = [handle](auto& pointer, const char* name) {
    void* symbol = dlsym(handle, name);
    if (!symbol) throw GpuError(std::string("cuSPARSE lacks ") + name);
    pointer = reinterpret_cast<std::remove_reference_t<decltype(pointer)>>(symbol);
  };
#define PGSIM_CUSPARSE_RESOLVE(name) resolve(lib.name, "cusparse" #name);
  PGSIM_CUSPARSE_FUNCTIONS(PGSIM_CUSPARSE_RESOLVE)
#undef PGSIM_CUSPARSE_RESOLVE
  return lib;
}

}  // namespace

const CusparseLibrary& cusparse() {
  static const CusparseLibrary lib = load();  // a failed load throws and is tried again next time
  return lib;
}

}  // namespace pgsim::gpu
