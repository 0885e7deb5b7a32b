// --backend: auto falls back to the CPU with a message, gpu without a GPU is a clear error.
#include <catch2/catch.hpp>

#include "test_util.hpp"
#ifdef PGSIM_HAVE_CUDA
#include "gpu/device_info.hpp"
#endif

using namespace pgsim;

namespace {

bool gpu_usable() {
#ifdef PGSIM_HAVE_CUDA
  return gpu::device_available(nullptr);
#else
  return false;
#endif
}

const char* kGrid =
    "* 2x2 grid, pad at n1\n"
    "R1 n1 n2 1\nR2 n2 n3 1\nR3 n3 n4 1\nR4 n4 n1 1\n"
    "V1 n1 0 1.0\nI1 n3 0 1m\n.end\n";

}  // namespace

TEST_CASE("backend auto solves everywhere and says which back end it used") {
  test::TempDir dir;
  const std::string net = dir.write("g.sp", kGrid);
  REQUIRE(test::run_pgsim("\"" + net + "\" --backend auto --json " + dir.file("r.json"), dir.file("log")) == 0);
  const std::string json = test::read_text(dir.file("r.json"));
  CHECK(json.find(gpu_usable() ? "\"backend\": \"gpu\"" : "\"backend\": \"cpu\"") != std::string::npos);
  if (!gpu_usable()) CHECK(test::read_text(dir.file("log")).find("no usable GPU") != std::string::npos);
}

TEST_CASE("backend gpu without a GPU is an error naming the cause") {
  if (gpu_usable()) return;  // nothing to test where a GPU exists: the GPU tests cover it
  test::TempDir dir;
  const std::string net = dir.write("g.sp", kGrid);
  CHECK(test::run_pgsim("\"" + net + "\" --backend gpu", dir.file("log")) == 4);
  CHECK(test::read_text(dir.file("log")).find("no usable GPU") != std::string::npos);
}

TEST_CASE("backend cpu and unknown back ends") {
  test::TempDir dir;
  const std::string net = dir.write("g.sp", kGrid);
  CHECK(test::run_pgsim("\"" + net + "\" --backend cpu", dir.file("log")) == 0);
  CHECK(test::run_pgsim("\"" + net + "\" --backend tpu", dir.file("log2")) == 2);
}
