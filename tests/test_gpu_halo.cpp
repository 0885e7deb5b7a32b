// The device side of the distributed SpMV and PCG on one GPU, without NCCL or MPI:
//  - HaloSpmv (pack, exchange, interior, boundary add) on every rank's block of a partitioned
//    grid, in every SpMV layout, against G x on the CPU; the exchange here is a stand-in that
//    checks the packed send values against the block's send lists and fills the halo with the
//    values the neighbours own;
//  - GpuPcg's cross-rank hook: with a "sum over ranks" that multiplies by P (what P ranks holding
//    identical blocks would give) every inner product scales alike, exactly for P a power of two, so
//    the iteration count and x must be bit for bit those of the single-process loop; any inner product that bypassed the
//    hook would change them;
//  - DeviceTwoLevel (the coarse correction on the device) against the two-level formula of
//    dist/two_level.hpp evaluated on the host, on one rank (the sum over ranks is the identity),
//    and on each rank's block of a partition against the CPU path's host steps
//    (tests/coarse_sequence.hpp), the neighbours' coarse unknowns included.
#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <cmath>

#include "cmg/builder.hpp"
#include "coarse_sequence.hpp"
#include "dist/coarse_space.hpp"
#include "dist/partition.hpp"
#include "gpu/halo_spmv.hpp"
#include "gpu/jacobi_device.hpp"
#include "gpu/pcg_gpu.hpp"
#include "gpu/two_level_device.hpp"
#include "gpu_scale.hpp"
#include "gpu_test_util.hpp"
#include "grid_system.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

// What the neighbours would send: the halo values taken from the global x, and a check that
// this rank packed exactly x_local at its send lists.
class KnownHalo final : public gpu::HaloExchange {
 public:
  KnownHalo(const std::vector<double>& halo, const std::vector<double>& expected_send)
      : halo_(halo), expected_send_(expected_send), sent_(expected_send.size()) {}
  void exchange(const double* send, double* halo, cudaStream_t stream) override {
    if (sent_.size())
      PGSIM_CUDA(cudaMemcpyAsync(sent_.data(), send, sent_.size() * sizeof(double), cudaMemcpyDeviceToDevice, stream));
    if (halo_.size())
      PGSIM_CUDA(cudaMemcpyAsync(halo, halo_.data(), halo_.size() * sizeof(double), cudaMemcpyDeviceToDevice, stream));
    ++calls;
  }
  std::vector<double> sent() const { return sent_.download(); }
  const std::vector<double>& expected_send() const { return expected_send_; }
  int calls = 0;

 private:
  gpu::DeviceBuffer<double> halo_;
  std::vector<double> expected_send_;
  gpu::DeviceBuffer<double> sent_;
};

// One rank: the sum over ranks leaves the values alone.
class OneRank final : public gpu::DeviceScalarSum {
 public:
  void sum(double*, int, cudaStream_t) override {}
};

// Multiplies every summed scalar by `ranks`, counting the calls.
class ScaledSum final : public gpu::DeviceScalarSum {
 public:
  explicit ScaledSum(double ranks) : ranks_(ranks) {}
  void sum(double* values, int count, cudaStream_t stream) override {
    test::scale_on_device(values, count, ranks_, stream);
    PGSIM_CUDA(cudaGetLastError());
    ++calls;
  }
  int calls = 0;

 private:
  double ranks_;
};

}  // namespace

TEST_CASE("HaloSpmv: every rank's rows of G x, with the packed send values its neighbours need", "[gpu][dist]") {
  test::skip_without_gpu();
  const CsrMatrix G = test::make_eliminated_grid(60, 40).G;
  const std::vector<double> x = test::random_vector(size_t(G.rows), 5);
  std::vector<double> y(x.size());
  G.multiply(x.data(), y.data());
  for (int32_t parts : {2, 3, 5}) {
    const dist::Partition p = dist::partition_rows(G, parts);
    int64_t halo_total = 0;
    for (int32_t r = 0; r < parts; ++r) {
      const dist::RankBlock blk = dist::extract_block(G, std::vector<double>(size_t(G.rows), 0.0), p, r);
      std::vector<double> x_local(size_t(blk.rows())), y_want(x_local.size()), halo, send;
      for (int32_t k = 0; k < blk.rows(); ++k) {
        x_local[k] = x[p.original[blk.first_row + k]];
        y_want[k] = y[p.original[blk.first_row + k]];
      }
      for (int32_t g : blk.halo_global) halo.push_back(x[p.original[g]]);
      for (const dist::Neighbor& nb : blk.neighbors)
        for (int32_t i : nb.send) send.push_back(x_local[i]);
      halo_total += blk.halo();
      const std::vector<int32_t> offsets = gpu::send_offsets(blk);
      REQUIRE(offsets.size() == blk.neighbors.size() + 1);
      CHECK(offsets.back() == int32_t(send.size()));
      for (auto layout : gpu::all_layouts()) {
        CAPTURE(parts, r, gpu::layout_name(layout));
        KnownHalo exchange(halo, send);
        gpu::HaloSpmv A(blk, layout, exchange);
        gpu::DeviceBuffer<double> dx(x_local), dy(x_local.size());
        PGSIM_CUDA(cudaMemset(dy.data(), 0xff, dy.size() * sizeof(double)));  // NaNs: every row must be written
        A.multiply(dx.data(), dy.data(), nullptr);
        PGSIM_CUDA(cudaDeviceSynchronize());
        CHECK(exchange.calls == (blk.neighbors.empty() ? 0 : 1));
        if (!send.empty()) CHECK(exchange.sent() == send);  // a gather: exact
        CHECK(test::relative_difference(dy.download(), y_want) < 1e-14);
      }
    }
    CHECK(halo_total > 0);  // the cut is real, so the boundary rows were exercised
  }
}

TEST_CASE("pack and boundary add: empty lists do nothing, long lists cover every entry", "[gpu][dist]") {
  test::skip_without_gpu();
  const int32_t n = 3000;  // more than one thread block
  const std::vector<double> x = test::random_vector(size_t(n), 8);
  std::vector<int32_t> index;
  for (int32_t i = n - 1; i >= 0; i -= 2) index.push_back(i);
  gpu::DeviceBuffer<double> dx(x), send(index.size());
  gpu::DeviceBuffer<int32_t> di(index);
  gpu::pack_send_values(dx.data(), di.data(), 0, send.data(), nullptr);  // nothing, no launch
  gpu::pack_send_values(dx.data(), di.data(), int32_t(index.size()), send.data(), nullptr);
  const std::vector<double> got = send.download();
  for (size_t k = 0; k < index.size(); ++k) REQUIRE(got[k] == x[index[k]]);

  // B: boundary row k (local row 2k) couples to halo entries k and k + 1.
  const int32_t rows = 1500;
  CsrMatrix B;
  B.rows = rows;
  std::vector<int32_t> row_of;
  std::vector<double> halo = test::random_vector(size_t(rows) + 1, 9);
  std::vector<double> y_host = test::random_vector(size_t(n), 10), want = y_host;
  for (int32_t k = 0; k < rows; ++k) {
    B.col.insert(B.col.end(), {k, k + 1});
    B.val.insert(B.val.end(), {-0.5 - k * 1e-3, -1.25});
    B.ptr.push_back(int32_t(B.col.size()));
    row_of.push_back(2 * k);
    want[2 * k] += (-0.5 - k * 1e-3) * halo[k] + -1.25 * halo[k + 1];
  }
  gpu::DeviceCsr dB(B);
  gpu::DeviceBuffer<int32_t> drows(row_of);
  gpu::DeviceBuffer<double> dhalo(halo), dy(y_host);
  gpu::add_boundary_terms(dB, drows.data(), dhalo.data(), dy.data(), nullptr);
  PGSIM_CUDA(cudaDeviceSynchronize());
  CHECK(test::max_abs_difference(dy.download(), want) < 1e-14);
}

TEST_CASE("GpuPcg with a cross-rank sum: every inner product goes through it", "[gpu][dist]") {
  test::skip_without_gpu();
  std::mt19937 rng(31);
  const CsrMatrix G = test::grid_sdd(80, 70, 37, rng);
  const std::vector<double> b = test::random_vector(size_t(G.rows), rng);
  SolveControl control;
  control.tolerance = 1e-10;
  auto A = gpu::make_device_spmv(gpu::SpmvLayout::csr, G);
  gpu::DeviceJacobi M(G);
  gpu::DeviceBuffer<double> db(b);
  for (bool graphs : {true, false}) {
    CAPTURE(graphs);
    gpu::DeviceBuffer<double> x1(std::vector<double>(b.size(), 0.0)), x4(std::vector<double>(b.size(), 0.0));
    gpu::GpuPcg alone(G.rows, graphs);
    const SolveResult one = alone.solve(*A, db.data(), x1.data(), M, control);
    ScaledSum four_ranks(4.0);
    gpu::GpuPcg shared(G.rows, graphs, &four_ranks);
    const SolveResult four = shared.solve(*A, db.data(), x4.data(), M, control);
    REQUIRE(one.converged);
    CHECK(one.iterations > 20);
    CHECK(four.iterations == one.iterations);
    // Scaling by a power of two is exact: the same alpha, beta and verdicts, bit for bit.
    CHECK(four.relative_residual == one.relative_residual);
    CHECK(x4.download() == x1.download());
    CHECK(four_ranks.calls > 0);
  }
}

TEST_CASE("DeviceTwoLevel: z = w + Z (y1 - y2) of the balancing two-level preconditioner, as on the host",
          "[gpu][dist]") {
  test::skip_without_gpu();
  std::mt19937 rng(41);
  const CsrMatrix grid = test::grid_sdd(40, 30, 97, rng);
  // One rank holding everything: its block is G in the partition's row order.
  const dist::Partition part = dist::partition_rows(grid, 1);
  const dist::RankBlock blk = dist::extract_block(grid, std::vector<double>(size_t(grid.rows), 0.0), part, 0);
  const CsrMatrix& G = blk.interior;
  const int32_t n = G.rows;
  // Coarse unknowns: 5 x 5 patches of the grid, numbered in order of first row (every number
  // used: Z has full column rank), and the first patch's rows in none (-1), as the coarse
  // space leaves the ground's aggregate out.
  std::vector<int32_t> unknown_of_row(static_cast<size_t>(n)), unknown_of_patch(48, -1);
  int32_t unknowns = 0;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t o = part.original[i], x = o % 40, y = o / 40, patch = (y / 5) * 8 + x / 5;
    if (patch > 0 && unknown_of_patch[patch] < 0) unknown_of_patch[patch] = unknowns++;
    unknown_of_row[i] = patch > 0 ? unknown_of_patch[patch] : -1;
  }
  Eigen::MatrixXd Gd = Eigen::MatrixXd::Zero(n, n), Z = Eigen::MatrixXd::Zero(n, unknowns);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) Gd(i, G.col[k]) = G.val[k];
    if (unknown_of_row[i] >= 0) Z(i, unknown_of_row[i]) = 1;
  }
  const Eigen::MatrixXd GZ = Gd * Z, Einv = (Z.transpose() * GZ).inverse();
  Eigen::VectorXd inv_diag(n);
  for (int32_t i = 0; i < n; ++i) inv_diag[i] = 1 / Gd(i, i);

  gpu::CoarseCorrectionData data;
  data.operators = dist::build_coarse_operators(blk, unknown_of_row, {}, 0, unknowns, unknowns);
  REQUIRE(data.operators.positions() == unknowns);  // one rank: its own unknowns, in order
  data.inverse_rows.assign(Einv.data(), Einv.data() + Einv.size());  // symmetric: either order
  OneRank one;
  gpu::DeviceTwoLevel B(std::make_unique<gpu::DeviceJacobi>(G), data, one);
  const std::vector<double> r = test::random_vector(size_t(n), rng);
  gpu::DeviceBuffer<double> dr(r), dz(r.size());
  B.apply(dr.data(), dz.data(), nullptr);
  PGSIM_CUDA(cudaDeviceSynchronize());

  // The formula with dense matrices (independent of the operators' layout and assembly).
  const Eigen::VectorXd rv = Eigen::Map<const Eigen::VectorXd>(r.data(), n);
  const Eigen::VectorXd y1 = Einv * (Z.transpose() * rv);
  const Eigen::VectorXd w = inv_diag.cwiseProduct(rv - GZ * y1);
  const Eigen::VectorXd y2 = Einv * (GZ.transpose() * w);
  const Eigen::VectorXd z = w + Z * (y1 - y2);
  CHECK(test::relative_difference(dz.download(), std::vector<double>(z.data(), z.data() + n)) < 1e-12);

  // Exact on the coarse space: (I - G Q) G Z v = 0, so B (G Z v) = Q G Z v = Z v.
  Eigen::VectorXd v(unknowns);
  for (int32_t c = 0; c < unknowns; ++c) v[c] = std::sin(1.0 + c);
  const Eigen::VectorXd gzv = GZ * v, zv = Z * v;
  gpu::DeviceBuffer<double> dgzv(std::vector<double>(gzv.data(), gzv.data() + n));
  B.apply(dgzv.data(), dz.data(), nullptr);
  PGSIM_CUDA(cudaDeviceSynchronize());
  CHECK(test::max_abs_difference(dz.download(), std::vector<double>(zv.data(), zv.data() + n)) < 1e-9);
}

TEST_CASE("DeviceTwoLevel on each rank's block: the host steps of the CPU path, neighbours' unknowns included",
          "[gpu][dist]") {
  // Every rank of a 3-way partition, one at a time on this GPU, the sum over ranks left out on
  // both sides: the device's kernels against test::coarse_sequence (the host functions the CPU
  // path applies, checked against the CPU operator under mpirun by dist_two_level_check), with
  // rows of E^{-1} at random (both sides read the same ones).
  test::skip_without_gpu();
  const EliminatedSystem sys = test::make_eliminated_grid(60, 40);
  const int32_t parts = 3;
  const dist::Partition p = dist::partition_rows(sys.G, parts);
  std::vector<dist::RankBlock> blocks;
  std::vector<int32_t> unknown_of_global(size_t(sys.G.rows), -1);  // renumbered row -> global coarse unknown
  int32_t unknowns = 0;
  std::vector<int32_t> first, count;
  for (int32_t r = 0; r < parts; ++r) {
    blocks.push_back(dist::extract_block(sys.G, sys.b, p, r));
    const dist::RankBlock& blk = blocks.back();
    const dist::CoarseSpace space = dist::build_coarse_space(blk, build_cmg_hierarchy(blk.interior), 0);
    for (int32_t i = 0; i < blk.rows(); ++i)
      if (space.unknown_of_row[i] >= 0)
        unknown_of_global[size_t(blk.first_row + i)] = unknowns + space.unknown_of_row[i];
    first.push_back(unknowns);
    count.push_back(space.count);
    unknowns += space.count;
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> entry(-1, 1);
  for (int32_t r = 0; r < parts; ++r) {
    CAPTURE(r);
    const dist::RankBlock& blk = blocks[size_t(r)];
    std::vector<int32_t> own(size_t(blk.rows())), halo;
    for (int32_t i = 0; i < blk.rows(); ++i) own[size_t(i)] = unknown_of_global[size_t(blk.first_row + i)];
    for (int32_t g : blk.halo_global) halo.push_back(unknown_of_global[size_t(g)]);
    gpu::CoarseCorrectionData data;
    data.operators = dist::build_coarse_operators(blk, own, halo, first[size_t(r)], count[size_t(r)], unknowns);
    const dist::CoarseOperators& op = data.operators;
    REQUIRE(op.positions() > op.count);  // the neighbours' unknowns are read too
    REQUIRE(op.rest.rows > 0);
    for (int64_t k = 0; k < int64_t(op.positions()) * unknowns; ++k) data.inverse_rows.push_back(entry(rng));
    OneRank one;
    gpu::DeviceTwoLevel B(std::make_unique<gpu::DeviceJacobi>(blk.interior), data, one);
    const std::vector<double> x = test::random_vector(size_t(blk.rows()), uint32_t(11 + r));
    gpu::DeviceBuffer<double> dx(x), dz(x.size());
    B.apply(dx.data(), dz.data(), nullptr);
    PGSIM_CUDA(cudaDeviceSynchronize());
    const std::vector<double> inv_diag = [&] {
      std::vector<double> d = blk.interior.diagonal();
      for (double& v : d) v = 1 / v;
      return d;
    }();
    const std::vector<double> want = test::coarse_sequence(
        op, data.inverse_rows, x, [](std::vector<double>&) {},
        [&](const std::vector<double>& u, std::vector<double>& w) {
          for (size_t i = 0; i < u.size(); ++i) w[i] = inv_diag[i] * u[i];
        });
    CHECK(test::relative_difference(dz.download(), want) < 1e-12);
  }
}
