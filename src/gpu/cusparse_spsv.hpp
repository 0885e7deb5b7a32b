#pragma once
// cuSPARSE SpSV (the vendor baseline) for a triangle already on the device.
#include <cusparse.h>

#include "gpu/device_buffer.hpp"
#include "pcg/triangular.hpp"

namespace pgsim::gpu {

class CusparseSpsv {
 public:
  // Runs cuSPARSE's analysis; `T` must outlive this object.
  CusparseSpsv(cusparseHandle_t handle, const DeviceCsr& T, Triangle tri);
  ~CusparseSpsv();
  CusparseSpsv(const CusparseSpsv&) = delete;
  CusparseSpsv& operator=(const CusparseSpsv&) = delete;

  void solve(const double* b, double* x, cudaStream_t stream);

 private:
  cusparseHandle_t handle_;
  int64_t n_;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseSpSVDescr_t spsv_ = nullptr;
  DeviceBuffer<char> buffer_;
};

}  // namespace pgsim::gpu
