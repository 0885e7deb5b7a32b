#include "gpu/cusparse_library.hpp"

#include <string>

#include "gpu/cuda_check.hpp"
#include "mna/shared_library.hpp"

namespace pgsim::gpu {
namespace {

CusparseLibrary load() {
  std::string error;
  void* handle = open_shared_library("libcusparse.so." + std::to_string(CUSPARSE_VER_MAJOR), PGSIM_CUDA_LIBRARY_DIR, error);
  if (handle == nullptr) throw GpuError("cannot load cuSPARSE: " + error);
  CusparseLibrary lib;
#define PGSIM_CUSPARSE_RESOLVE(name) \
  if (!resolve_function(handle, "cusparse" #name, lib.name)) throw GpuError("cuSPARSE lacks cusparse" #name);
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
