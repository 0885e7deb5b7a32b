// The device CMG cycle against the reference cycle of cmg/hierarchy.hpp, and the GPU PCG with it.
#include <catch2/catch.hpp>

#include "gpu/cmg_device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/host_staging.hpp"
#include "gpu/pcg_gpu.hpp"
#include "gpu_test_util.hpp"
#include "pcg/direct.hpp"

using namespace pgsim;

TEST_CASE("staged uploads and downloads copy (and convert) exactly, across chunk boundaries") {
  test::skip_without_gpu();
  std::mt19937 rng(5);
  // A 1000-byte chunk: both pinned buffers reused many times, a partial last chunk.
  gpu::HostStaging staging(1000);
  const std::vector<double> d = test::random_vector(12345, rng);
  std::vector<int32_t> i(7777);
  for (size_t k = 0; k < i.size(); ++k) i[k] = int32_t(k * 2654435761u);
  gpu::DeviceBuffer<double> dd(d.size());
  gpu::DeviceBuffer<float> df(d.size());
  gpu::DeviceBuffer<int32_t> di(i.size());
  staging.upload(dd.data(), d);
  staging.upload(df.data(), d);
  staging.upload(di.data(), i);
  staging.finish();
  CHECK(dd.download() == d);
  CHECK(di.download() == i);
  const std::vector<float> f = df.download();
  REQUIRE(f.size() == d.size());
  for (size_t k = 0; k < d.size(); ++k) REQUIRE(f[k] == float(d[k]));
  // Downloads, after the uploads on the same buffers: every byte back, a partial last chunk
  // (and one of a single chunk and one of none).
  std::vector<double> back(d.size(), -1.0);
  staging.download(back.data(), dd.data(), d.size() * sizeof(double));
  CHECK(back == d);
  std::vector<int32_t> few(100, -1);
  staging.download(few.data(), di.data(), few.size() * sizeof(int32_t));
  CHECK(std::equal(few.begin(), few.end(), i.begin()));
  staging.download(few.data(), di.data(), 0);
  staging.upload(di.data(), std::vector<int32_t>(i.size(), 3));
  staging.finish();
  CHECK(di.download() == std::vector<int32_t>(i.size(), 3));
}

TEST_CASE("device CMG cycle equals the reference cycle") {
  test::skip_without_gpu();
  std::mt19937 rng(11);
  // Pads every 37th node: short rows only. Every 2nd: the ground vertex has ~1350 edges, a long
  // row at level 0 and long clusters below, cut into two chunks (the block-per-chunk path).
  for (auto [pad, repeats] : {std::pair{37, 1}, std::pair{37, 2}, std::pair{2, 1}, std::pair{2, 2}}) {
    const CsrMatrix G = test::grid_sdd(60, 45, pad, rng);
    const CmgHierarchy h = test::naive_hierarchy(G, 40, repeats, rng);
    REQUIRE(h.levels.size() >= 4);
    const std::vector<double> r = test::random_vector(size_t(G.rows), rng);
    const std::vector<double> want = test::reference_cmg(h, r);
    // No tail, the small levels in the tail, all in the tail; in one block or a cluster of 8;
    // lane groups widened on small levels (every level here) or the fixed widths.
    for (auto [tail_rows, blocks] : {std::pair{0, 8}, std::pair{300, 8}, std::pair{1 << 30, 1}, std::pair{1 << 30, 8}})
      for (bool widen : {true, false}) {
        gpu::CmgDeviceOptions opt;
        opt.tail_rows = tail_rows;
        opt.tail_blocks = blocks;
        opt.widen_lanes = widen;
        INFO("pad " << pad << ", repeats " << repeats << ", tail_rows " << tail_rows << ", tail_blocks " << blocks
                    << ", widen_lanes " << widen);
        CHECK(test::relative_difference(test::device_apply(h, opt, r), want) < 1e-12);
        opt.float_values = true;
        CHECK(test::relative_difference(test::device_apply(h, opt, r), want) < 1e-5);
      }
    // Every level by grid launches, the coarse solve too (a coarsest level of ~40 rows: fewer
    // than a lane's fetched entries of the inverse's row); the fixed data fetched before the
    // wait or after it: the same sums in the same order, so the same bits. With the fixed lane
    // widths the coarse levels' rows (dozens of nonzeros) take several batches of fetches.
    for (bool widen : {true, false}) {
      gpu::CmgDeviceOptions early;
      early.tail_rows = 0;
      early.tail_max_coarse = 0;
      early.widen_lanes = widen;
      gpu::CmgDeviceOptions late = early;
      late.fetch_early = false;
      INFO("pad " << pad << ", repeats " << repeats << ", no tail, widen_lanes " << widen);
      const std::vector<double> z = test::device_apply(h, early, r);
      CHECK(test::relative_difference(z, want) < 1e-12);
      CHECK(test::device_apply(h, late, r) == z);
    }
  }
}

TEST_CASE("device CMG cycle with weighted repeats equals the reference cycle") {
  test::skip_without_gpu();
  std::mt19937 rng(14);
  // Long rows and clusters (pad 2); repeats 1 and 2 with weights other than 1, in grid launches
  // (the coarse solve too) and in the tail.
  const CsrMatrix G = test::grid_sdd(60, 45, 2, rng);
  for (int repeats : {1, 2}) {
    CmgHierarchy h = test::naive_hierarchy(G, 40, repeats, rng);
    for (size_t l = 0; l + 1 < h.levels.size(); ++l)
      h.levels[l].weights = repeats == 1 ? std::vector<double>{1.4} : std::vector<double>{2.7, 1.1};
    const std::vector<double> r = test::random_vector(size_t(G.rows), rng);
    const std::vector<double> want = test::reference_cmg(h, r);
    CmgHierarchy plain = h;  // the weights change the result
    for (CmgLevel& level : plain.levels) level.weights.clear();
    CHECK(test::relative_difference(want, test::reference_cmg(plain, r)) > 1e-3);
    for (int32_t tail_rows : {0, 300, 1 << 30}) {
      gpu::CmgDeviceOptions opt;
      opt.tail_rows = tail_rows;
      opt.tail_max_coarse = tail_rows == 0 ? 0 : 512;
      INFO("repeats " << repeats << ", tail_rows " << tail_rows);
      CHECK(test::relative_difference(test::device_apply(h, opt, r), want) < 1e-12);
    }
  }
}

TEST_CASE("device CMG cycle with a coarsest level too large for the tail kernel") {
  test::skip_without_gpu();
  std::mt19937 rng(12);
  const CsrMatrix G = test::grid_sdd(60, 60, 13, rng);
  const CmgHierarchy h = test::naive_hierarchy(G, 2000, 1, rng);  // coarsest > 1024: grid coarse solve
  REQUIRE(h.levels.back().A.rows > 1024);
  const std::vector<double> r = test::random_vector(size_t(G.rows), rng);
  const std::vector<double> want = test::reference_cmg(h, r);
  CHECK(test::relative_difference(test::device_apply(h, {}, r), want) < 1e-12);
  gpu::CmgDeviceOptions serial;  // every kernel launched after the one before has finished
  serial.dependent_launches = false;
  CHECK(test::relative_difference(test::device_apply(h, serial, r), want) < 1e-12);
  gpu::CmgDeviceOptions late;  // fixed data fetched after the wait: the same bits
  late.fetch_early = false;
  CHECK(test::device_apply(h, late, r) == test::device_apply(h, {}, r));
}

TEST_CASE("GPU PCG with the device CMG solves to the direct solution, and profiling books every level") {
  test::skip_without_gpu();
  std::mt19937 rng(13);
  const CsrMatrix G = test::grid_sdd(80, 70, 29, rng);
  const CmgHierarchy h = test::naive_hierarchy(G, 60, 2, rng);
  const std::vector<double> b = test::random_vector(size_t(G.rows), rng);
  std::vector<double> x_direct(b.size());
  solve_direct(G, b, x_direct);
  for (bool profile : {false, true}) {
    std::vector<double> x(b.size(), 0.0);
    SolveControl control;
    control.tolerance = 1e-10;
    gpu::GpuSolveSettings s;
    s.precond = "cmg";
    s.profile = profile;
    auto rep = gpu::solve_on_gpu(G, b, x, &h, control, s);
    CHECK(rep.result.converged);
    CHECK(rep.result.relative_residual <= 1e-10);
    CHECK(test::relative_difference(x, x_direct) < 1e-8);
    REQUIRE(rep.levels.size() == h.levels.size());
    if (profile)
      for (const auto& l : rep.levels) CHECK(l.seconds >= 0);
    if (profile) CHECK(rep.levels[0].seconds > 0);
  }
}
