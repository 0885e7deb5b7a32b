#include "gpu/cusparse_spsv.hpp"

namespace pgsim::gpu {
namespace {

const double kOne = 1.0;

// Dense-vector descriptors are host objects; making them per call costs well under a microsecond.
struct Vectors {
  cusparseConstDnVecDescr_t b = nullptr;
  cusparseDnVecDescr_t x = nullptr;
  Vectors(int64_t n, const double* bp, double* xp) {
    PGSIM_CUSPARSE(cusparseCreateConstDnVec(&b, n, bp, CUDA_R_64F));
    PGSIM_CUSPARSE(cusparseCreateDnVec(&x, n, xp, CUDA_R_64F));
  }
  ~Vectors() {
    cusparseDestroyDnVec(b);
    cusparseDestroyDnVec(x);
  }
  Vectors(const Vectors&) = delete;
  Vectors& operator=(const Vectors&) = delete;
};

}  // namespace

CusparseSpsv::CusparseSpsv(cusparseHandle_t handle, const DeviceCsr& T, Triangle tri) : handle_(handle), n_(T.rows) {
  PGSIM_CUSPARSE(cusparseCreateCsr(&mat_, T.rows, T.rows, T.nnz, const_cast<int32_t*>(T.ptr.data()),
                                   const_cast<int32_t*>(T.col.data()), const_cast<double*>(T.val.data()),
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  cusparseFillMode_t fill = tri == Triangle::lower ? CUSPARSE_FILL_MODE_LOWER : CUSPARSE_FILL_MODE_UPPER;
  cusparseDiagType_t diag = CUSPARSE_DIAG_TYPE_NON_UNIT;
  PGSIM_CUSPARSE(cusparseSpMatSetAttribute(mat_, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill));
  PGSIM_CUSPARSE(cusparseSpMatSetAttribute(mat_, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag));
  PGSIM_CUSPARSE(cusparseSpSV_createDescr(&spsv_));
  DeviceBuffer<double> scratch(static_cast<size_t>(n_) + 1);
  Vectors v(n_, scratch.data(), scratch.data());
  size_t bytes = 0;
  PGSIM_CUSPARSE(cusparseSpSV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &kOne, mat_, v.b, v.x, CUDA_R_64F,
                                         CUSPARSE_SPSV_ALG_DEFAULT, spsv_, &bytes));
  buffer_ = DeviceBuffer<char>(bytes);
  PGSIM_CUSPARSE(cusparseSpSV_analysis(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &kOne, mat_, v.b, v.x, CUDA_R_64F,
                                       CUSPARSE_SPSV_ALG_DEFAULT, spsv_, buffer_.data()));
}

CusparseSpsv::~CusparseSpsv() {
  if (spsv_) cusparseSpSV_destroyDescr(spsv_);
  if (mat_) cusparseDestroySpMat(mat_);
}

void CusparseSpsv::solve(const double* b, double* x, cudaStream_t stream) {
  PGSIM_CUSPARSE(cusparseSetStream(handle_, stream));
  Vectors v(n_, b, x);
  PGSIM_CUSPARSE(cusparseSpSV_solve(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &kOne, mat_, v.b, v.x, CUDA_R_64F,
                                    CUSPARSE_SPSV_ALG_DEFAULT, spsv_));
}

}  // namespace pgsim::gpu
