#pragma once
// cuSPARSE, loaded when first used. Only --spmv cusparse and --trsv cusparse call it, and linking
// it made every pgsim process load it with libnvJitLink (260 MB of shared objects): 45-70 ms of
// relocation and static initialisers on the development VM before main, more than a whole CPU run
// of ibmpg1 (issue 13). cusparse() opens it with dlopen on the first call instead.
#include <cusparse.h>

namespace pgsim::gpu {

// The functions pgsim calls, named without their "cusparse" prefix: cusparse().SpMV(...).
#define PGSIM_CUSPARSE_FUNCTIONS(X)                                                                       \
  X(Create) X(Destroy) X(SetStream) X(GetErrorString) X(CreateCsr) X(DestroySpMat) X(SpMatSetAttribute) \
  X(CreateDnVec) X(CreateConstDnVec) X(DestroyDnVec) X(DnVecSetValues) X(SpMV_bufferSize) X(SpMV)       \
  X(SpSV_createDescr) X(SpSV_destroyDescr) X(SpSV_bufferSize) X(SpSV_analysis) X(SpSV_solve)

struct CusparseLibrary {
#define PGSIM_CUSPARSE_POINTER(name) decltype(&::cusparse##name) name = nullptr;
  PGSIM_CUSPARSE_FUNCTIONS(PGSIM_CUSPARSE_POINTER)
#undef PGSIM_CUSPARSE_POINTER
};

// The library of the toolkit pgsim was built with (its soname, searched as dlopen does, then the
// toolkit's library folder), loaded once and never closed; thread-safe. GpuError when it cannot be
// loaded or lacks one of the functions.
const CusparseLibrary& cusparse();

}  // namespace pgsim::gpu
