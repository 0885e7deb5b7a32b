#include "gpu/cusparse_spsv.hpp"

#include "gpu/cusparse_library.hpp"

namespace pgsim::gpu {
namespace {

const double kOne = 1.0;

// Dense-vector descriptors are host objects; making them per call costs well under a microsecond.
struct Vectors {
  cusparseConstDnVecDescr_t b = nullptr;
  cusparseDnVecDescr_t x = nullptr;
  Vectors(int64_t n, const double* bp, double* xp) {
    PGSIM_CUSPARSE(cusparse().CreateConstDnVec(&b, n, bp, CUDA_R_64F));
    PGSIM_CUSPARSE(cusparse().CreateDnVec(&x, n, xp, CUDA_R_64F));
  }
  ~Vectors() {
    cusparse().DestroyDnVec(b);
    cusparse().DestroyDnVec(x);
  }
  Vectors(const Vectors&) = delete;
  Vectors& operator=(const Vectors&) = delete;
};

}  // namespace

CusparseSpsv::CusparseSpsv(cusparseHandle_t handle, const DeviceCsr& T, Triangle tri) : handle_(handle), n_(T.rows) {
  PGSIM_CUSPARSE(cusparse().CreateCsr(&mat_, T.rows, T.rows, T.nnz, const_cast<int32_t*>(T.ptr.data()),
                                   const_cast<int32_t*>(T.col.data()), const_cast<double*>(T.val.data()),
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  cusparseFillMode_t fill = tri == Triangle::lower ? CUSPARSE_FILL_MODE_LOWER : CUSPARSE_FILL_MODE_UPPER;
  cusparseDiagType_t diag = CUSPARSE_DIAG_TYPE_NON_UNIT;
  PGSIM_CUSPARSE(cusparse().SpMatSetAttribute(mat_, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill));
  PGSIM_CUSPARSE(cusparse().SpMatSetAttribute(mat_, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag));
  PGSIM_CUSPARSE(cusparse().SpSV_createDescr(&spsv_));
  DeviceBuffer<double> scratch(static_cast<size_t>(n_) + 1);
  Vectors v(n_, scratch.data(), scratch.data());
  size_t bytes = 0;
  PGSIM_CUSPARSE(cusparse().SpSV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &kOne, mat_, v.b, v.x, CUDA_R_64F,
                                         CUSPARSE_SPSV_ALG_DEFAULT, spsv_, &bytes));
  buffer_ = DeviceBuffer<char>(bytes);
  PGSIM_CUSPARSE(cusparse().SpSV_analysis(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &kOne, mat_, v.b, v.x, CUDA_R_64F,
                                       CUSPARSE_SPSV_ALG_DEFAULT, spsv_, buffer_.data()));
}

CusparseSpsv::~CusparseSpsv() {
  if (spsv_) cusparse().SpSV_destroyDescr(spsv_);
  if (mat_) cusparse().DestroySpMat(mat_);
}

void CusparseSpsv::solve(const double* b, double* x, cudaStream_t stream) {
  PGSIM_CUSPARSE(cusparse().SetStream(handle_, stream));
  Vectors v(n_, b, x);
  PGSIM_CUSPARSE(cusparse().SpSV_solve(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &kOne, mat_, v.b, v.x, CUDA_R_64F,
                                    CUSPARSE_SPSV_ALG_DEFAULT, spsv_));
}

}  // namespace pgsim::gpu
