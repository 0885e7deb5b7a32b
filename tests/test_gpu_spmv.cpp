// The device SpMV layouts against CsrMatrix::multiply on random matrices.
#include <catch2/catch.hpp>

#include <string>

#include "gpu/cusparse_library.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/spmv.hpp"
#include "gpu_test_util.hpp"

using namespace pgsim;

namespace {

// Rows of random length in [0, max_len] (empty rows included), random columns and values.
CsrMatrix random_matrix(int32_t n, int32_t max_len, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> len(0, max_len), column(0, n - 1);
  std::vector<std::map<int32_t, double>> rows(static_cast<size_t>(n));
  std::uniform_real_distribution<double> value(-1, 1);
  for (auto& r : rows) {
    const int32_t k = len(rng);
    for (int32_t j = 0; j < k; ++j) r[column(rng)] = value(rng);
  }
  return test::from_map(n, rows);
}

void check_all_layouts(const CsrMatrix& A, std::mt19937& rng) {
  std::vector<double> x = test::random_vector(size_t(A.rows), rng), want(size_t(A.rows));
  A.multiply(x.data(), want.data());
  gpu::DeviceBuffer<double> dx(x), dy(size_t(A.rows));
  for (auto layout : gpu::all_layouts()) {
    auto spmv = gpu::make_device_spmv(layout, A);
    PGSIM_CUDA(cudaMemset(dy.data(), 0xff, dy.size() * sizeof(double)));  // NaNs: every row must be written
    spmv->multiply(dx.data(), dy.data(), nullptr);
    PGSIM_CUDA(cudaDeviceSynchronize());
    INFO(gpu::layout_name(layout) << " " << spmv->detail() << ", " << A.rows << " rows, " << A.nnz() << " nnz");
    CHECK(test::relative_difference(dy.download(), want) < 1e-13);
  }
}

}  // namespace

TEST_CASE("every SpMV layout matches the CPU on random matrices") {
  test::skip_without_gpu();
  std::mt19937 rng(7);
  for (int32_t max_len : {1, 5, 9, 20, 70}) check_all_layouts(random_matrix(3001, max_len, rng), rng);
}

TEST_CASE("every SpMV layout matches the CPU on a grid matrix and on tiny ones") {
  test::skip_without_gpu();
  std::mt19937 rng(8);
  check_all_layouts(test::grid_sdd(157, 93, 11, rng), rng);
  check_all_layouts(random_matrix(1, 1, rng), rng);
  check_all_layouts(random_matrix(33, 40, rng), rng);
}

TEST_CASE("layout names round-trip and unknown names are rejected") {
  for (auto layout : gpu::all_layouts()) CHECK(gpu::parse_layout(gpu::layout_name(layout)) == layout);
  CHECK_THROWS_AS(gpu::parse_layout("ellpack"), std::invalid_argument);
}

TEST_CASE("cuSPARSE opens on first use, without a device, every function found") {
  // pgsim does not link cuSPARSE (gpu/cusparse_library.hpp): the layouts above reach it through
  // dlopen. Loading needs no GPU, so this runs everywhere the build found the toolkit.
  const gpu::CusparseLibrary& lib = gpu::cusparse();
  CHECK(&lib == &gpu::cusparse());  // loaded once
#define PGSIM_CHECK_LOADED(name) CHECK(lib.name != nullptr);
  PGSIM_CUSPARSE_FUNCTIONS(PGSIM_CHECK_LOADED)
#undef PGSIM_CHECK_LOADED
  CHECK(std::string(lib.GetErrorString(CUSPARSE_STATUS_INVALID_VALUE)).find("invalid") != std::string::npos);
}
