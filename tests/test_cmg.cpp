#include <catch2/catch.hpp>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "app/run.hpp"
#include "cmg/builder.hpp"
#include "cmg/clustering.hpp"
#include "cmg/cmg_preconditioner.hpp"
#include "cmg/coarse_factor.hpp"
#include "cmg/counting_sort.hpp"
#include "cmg/galerkin.hpp"
#include "cmg/laplacian.hpp"
#include "cmg/row_schedule.hpp"
#include "grid_system.hpp"
#include "hierarchy_checks.hpp"
#include "mna/reduce.hpp"
#include "parser/netlist.hpp"
#include "pcg/direct.hpp"
#include "pcg/pcg_cpu.hpp"
#include "operator_checks.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

// Checks that A is a graph Laplacian: symmetric, off-diagonals <= 0, rows summing to zero.
void check_laplacian(const CsrMatrix& A) {
  int bad_sign = 0, bad_sum = 0, asymmetric = 0, unsorted = 0;
  for (int32_t i = 0; i < A.rows; ++i) {
    double sum = 0, diag = 0;
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k) {
      const int32_t j = A.col[k];
      sum += A.val[k];
      if (k > A.ptr[i] && A.col[k - 1] >= j) ++unsorted;
      if (j == i) {
        diag = A.val[k];
        continue;
      }
      if (A.val[k] > 0) ++bad_sign;
      const auto* begin = A.col.data() + A.ptr[j];
      const auto* end = A.col.data() + A.ptr[j + 1];
      const auto* at = std::lower_bound(begin, end, i);
      if (at == end || *at != i || A.val[at - A.col.data()] != A.val[k]) ++asymmetric;
    }
    if (std::fabs(sum) > 1e-12 * diag) ++bad_sum;
  }
  CHECK(bad_sign == 0);
  CHECK(bad_sum == 0);
  CHECK(asymmetric == 0);
  CHECK(unsorted == 0);
}

// G = [3 -1 0; -1 2 -1; 0 -1 1.5]: excess 2, 0, 0.5.
CsrMatrix small_sdd() {
  CsrMatrix G;
  G.rows = 3;
  G.ptr = {0, 2, 5, 7};
  G.col = {0, 1, 0, 1, 2, 1, 2};
  G.val = {3, -1, -1, 2, -1, -1, 1.5};
  return G;
}

// Options with a small coarsest level (coarse_rows) and the given v_cycle_rows.
CmgOptions small_coarse(int32_t coarse_rows, int32_t v_cycle_rows = CmgOptions{}.v_cycle_rows) {
  CmgOptions o;
  o.coarse_rows = coarse_rows;
  o.v_cycle_rows = v_cycle_rows;
  return o;
}

test::GridSystem grid(int32_t side, int32_t via_stride) {
  test::GridShape shape;
  shape.nx = shape.ny = side;
  shape.via_stride = via_stride;
  return test::make_grid_system(shape);
}

}  // namespace

TEST_CASE("an SDD matrix becomes a Laplacian with one ground vertex", "[cmg]") {
  const CsrMatrix G = small_sdd();
  const CsrMatrix L = sdd_to_laplacian(G);
  REQUIRE(L.rows == 4);
  CHECK(L.ptr == FillVector<int32_t>{0, 3, 6, 9, 12});
  CHECK(L.col == FillVector<int32_t>{0, 1, 3, 0, 1, 2, 1, 2, 3, 0, 2, 3});
  CHECK(L.val == FillVector<double>{3, -1, -2, -1, 2, -1, -1, 1.5, -0.5, -2, -0.5, 2.5});
  check_laplacian(L);
}

TEST_CASE("the renumbered Laplacian is permute_symmetric of the Laplacian, bit for bit", "[cmg]") {
  // small_sdd() with vertices 0, 1, 2 and the ground 3 renumbered 2, 0, 3, 1.
  const CsrMatrix small_G = small_sdd();
  const CsrMatrix small = sdd_to_laplacian(grounded_sdd(small_G), {2, 0, 3, 1});
  CHECK(small.ptr == FillVector<int32_t>{0, 3, 6, 9, 12});
  CHECK(small.col == FillVector<int32_t>{0, 2, 3, 1, 2, 3, 0, 1, 2, 0, 1, 3});
  CHECK(small.val == FillVector<double>{2, -1, -1, 2.5, -2, -0.5, -1, -2, 3, -1, -0.5, 1.5});
  // A grid with wire chains, eliminated (rows of zero excess, fill-in): every array equal, for
  // any thread count.
  const test::GridSystem sys = grid(120, 4);
  const EliminatedSystem e = eliminate_chains(sys.G, sys.b);
  std::vector<int32_t> new_of_old(static_cast<size_t>(e.G.rows) + 1);
  std::iota(new_of_old.begin(), new_of_old.end(), 0);
  std::shuffle(new_of_old.begin(), new_of_old.end(), std::mt19937(7));
  const CsrMatrix expected = permute_symmetric(sdd_to_laplacian(e.G), new_of_old);
  // Both take the diagonal while writing the rows: the one a pass over the rows finds.
  const std::vector<double> expected_diagonal = expected.diagonal();
  REQUIRE(std::all_of(expected_diagonal.begin(), expected_diagonal.end(), [](double d) { return d > 0; }));
  const int before = omp_get_max_threads();
  for (int threads : {1, 2, 8}) {
    omp_set_num_threads(threads);
    std::vector<double> diagonal, permuted_diagonal;
    const CsrMatrix L = sdd_to_laplacian(grounded_sdd(e.G), new_of_old, &diagonal);
    CHECK(L.rows == expected.rows);
    CHECK(L.ptr == expected.ptr);
    CHECK(L.col == expected.col);
    CHECK(L.val == expected.val);
    CHECK(diagonal == expected_diagonal);
    const CsrMatrix P = permute_symmetric(sdd_to_laplacian(e.G), new_of_old, &permuted_diagonal);
    CHECK(P.val == expected.val);
    CHECK(permuted_diagonal == expected_diagonal);
  }
  omp_set_num_threads(before);
}

TEST_CASE("level 0 read from G clusters and coarsens as its stored Laplacian, bit for bit", "[cmg]") {
  // Rows with and without an edge to the ground (a hub row of the excess rows), at 1, 2 and 8
  // threads; the renumbered Laplacian from the grounded rows is the one made from G.
  const test::GridSystem sys = grid(120, 4);
  const EliminatedSystem e = eliminate_chains(sys.G, sys.b);
  const CsrMatrix L = sdd_to_laplacian(e.G);
  const int before = omp_get_max_threads();
  for (int threads : {1, 2, 8}) {
    omp_set_num_threads(threads);
    const GroundedSdd grounded = grounded_sdd(e.G);
    REQUIRE(grounded.rows() == L.rows);
    REQUIRE(grounded.ground_col.size() > 100);
    REQUIRE(grounded.ground_col.size() + 1 < size_t(L.rows));
    const Clustering expected_c = cluster_vertices(L);
    const Clustering c = cluster_vertices(grounded);
    REQUIRE(c.count < L.rows);
    CHECK(c.count == expected_c.count);
    CHECK(c.cluster_of == expected_c.cluster_of);
    const CsrMatrix expected = galerkin_coarse(L, c.cluster_of, c.count);
    const CsrMatrix Ac = galerkin_coarse(grounded, c.cluster_of, c.count);
    CHECK(Ac.rows == expected.rows);
    CHECK(Ac.ptr == expected.ptr);
    CHECK(Ac.col == expected.col);
    CHECK(Ac.val == expected.val);
    std::vector<int32_t> reversed(size_t(L.rows));
    for (int32_t i = 0; i < L.rows; ++i) reversed[size_t(i)] = L.rows - 1 - i;
    const CsrMatrix R = sdd_to_laplacian(grounded, reversed);
    const CsrMatrix P = permute_symmetric(L, reversed);
    CHECK(R.ptr == P.ptr);
    CHECK(R.col == P.col);
    CHECK(R.val == P.val);
  }
  omp_set_num_threads(before);
}

TEST_CASE("clustering cuts long paths and keeps heavy pairs together", "[cmg]") {
  // A path of 40 vertices with equal weights: clusters are runs of consecutive vertices of
  // 2 to kMaxHeight + 1 vertices.
  const int32_t n = 40;
  CsrMatrix P;
  P.rows = n;
  P.ptr.assign(1, 0);
  for (int32_t i = 0; i < n; ++i) {
    double d = 0;
    std::vector<std::pair<int32_t, double>> row;
    if (i > 0) row.push_back({i - 1, -1.0}), d += 1;
    row.push_back({i, 0.0});
    if (i + 1 < n) row.push_back({i + 1, -1.0}), d += 1;
    for (auto& [c, v] : row) {
      P.col.push_back(c);
      P.val.push_back(c == i ? d : v);
    }
    P.ptr.push_back(static_cast<int32_t>(P.col.size()));
  }
  const Clustering c = cluster_vertices(P);
  std::vector<int32_t> size(static_cast<size_t>(c.count), 0);
  for (int32_t v = 0; v < n; ++v) {
    ++size[c.cluster_of[v]];
    if (v > 0) CHECK((c.cluster_of[v] == c.cluster_of[v - 1] || c.cluster_of[v] == c.cluster_of[v - 1] + 1));
  }
  CHECK(*std::min_element(size.begin(), size.end()) >= 1);
  CHECK(*std::max_element(size.begin(), size.end()) <= 4);
  CHECK(c.count <= n / 2);

  // 0 -(10)- 1 -(1)- 2 -(10)- 3: the heavy pairs are the clusters.
  CsrMatrix Q;
  Q.rows = 4;
  Q.ptr = {0, 2, 5, 8, 10};
  Q.col = {0, 1, 0, 1, 2, 1, 2, 3, 2, 3};
  Q.val = {10, -10, -10, 11, -1, -1, 11, -10, -10, 10};
  const Clustering q = cluster_vertices(Q);
  CHECK(q.count == 2);
  CHECK(std::vector<int32_t>(q.cluster_of.begin(), q.cluster_of.end()) == std::vector<int32_t>{0, 0, 1, 1});
}

TEST_CASE("the hierarchy of a 200k-unknown grid: partitions, Laplacians, Galerkin levels", "[cmg]") {
  const test::GridSystem sys = grid(317, 2);
  REQUIRE(sys.G.rows >= 200000);
  const CmgHierarchy h = build_cmg_hierarchy(sys.G);
  REQUIRE(h.levels.size() >= 3);
  CHECK(h.n == sys.G.rows);
  CHECK(h.levels[0].A.rows == sys.G.rows + 1);
  CHECK(h.levels.back().A.rows <= CmgOptions{}.coarse_rows);

  // Level 0 numbering: a permutation of the unknowns and the ground vertex.
  std::vector<int32_t> seen(static_cast<size_t>(h.levels[0].A.rows), 0);
  for (int32_t v : h.level0_of_unknown) ++seen[v];
  ++seen[h.level0_ground];
  CHECK(std::all_of(seen.begin(), seen.end(), [](int32_t s) { return s == 1; }));

  for (size_t l = 0; l < h.levels.size(); ++l) {
    INFO("level " << l);
    const CmgLevel& level = h.levels[l];
    check_laplacian(level.A);
    const std::vector<double> diag = level.A.diagonal();
    for (size_t i = 0; i < diag.size(); ++i) REQUIRE(level.inv_diag[i] == Approx(0.5 / diag[i]));
    if (l + 1 == h.levels.size()) {
      CHECK(level.cluster_ptr.empty());
      continue;
    }
    const CmgLevel& next = h.levels[l + 1];
    CHECK(next.A.nnz() < level.A.nnz());
    const int w_cycle = std::max(1, int(std::floor(double(level.A.nnz()) / double(next.A.nnz()) - 1)));
    const bool v_cycle = next.A.rows <= CmgOptions{}.v_cycle_rows ||
                         int64_t(next.A.rows) * CmgOptions{}.v_cycle_ratio <= h.levels[0].A.rows;
    CHECK(level.repeats == (v_cycle ? 1 : std::min(w_cycle, CmgOptions{}.max_repeats)));
    CHECK(level.weights.size() == (level.repeats > 1 ? size_t(level.repeats) : 0));
    // R is a partition into contiguous, non-empty ranges, one per next-level vertex.
    REQUIRE(level.cluster_ptr.size() == static_cast<size_t>(next.A.rows) + 1);
    CHECK(level.cluster_ptr.front() == 0);
    CHECK(level.cluster_ptr.back() == level.A.rows);
    for (size_t c = 0; c + 1 < level.cluster_ptr.size(); ++c) REQUIRE(level.cluster_ptr[c] < level.cluster_ptr[c + 1]);
    // A_{l+1} = R^T A_l R, tested on a random vector: R^T (A_l (R y)) = A_{l+1} y.
    const std::vector<double> y = test::random_vector(static_cast<size_t>(next.A.rows), uint32_t(l));
    std::vector<double> Ry(static_cast<size_t>(level.A.rows)), ARy(Ry.size()), RtARy(y.size(), 0.0), Ay(y.size());
    for (size_t c = 0; c < y.size(); ++c)
      for (int32_t i = level.cluster_ptr[c]; i < level.cluster_ptr[c + 1]; ++i) Ry[i] = y[c];
    level.A.multiply(Ry.data(), ARy.data());
    for (size_t c = 0; c < y.size(); ++c)
      for (int32_t i = level.cluster_ptr[c]; i < level.cluster_ptr[c + 1]; ++i) RtARy[c] += ARy[i];
    next.A.multiply(y.data(), Ay.data());
    double scale = 0;
    for (double v : next.A.val) scale = std::max(scale, std::fabs(v));
    CHECK(test::max_abs_difference(RtARy, Ay) <= 1e-12 * scale * 10);
  }
}

TEST_CASE("the hierarchy is the same for any number of threads", "[cmg]") {
  // Wire chains (via stride 3) and pads: long ground row, clusters of every shape. Every array
  // must match bit for bit, so iteration counts and voltages cannot depend on the thread count.
  // 274k unknowns: large enough for the parallel paths (prefix sums, sort chunks, cut rounds).
  const test::GridSystem sys = grid(370, 3);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const CmgHierarchy one = build_cmg_hierarchy(sys.G);
  REQUIRE(one.levels.size() >= 3);
  for (int count : {2, 4, 8}) {
    INFO(count << " threads");
    omp_set_num_threads(count);
    const CmgHierarchy other = build_cmg_hierarchy(sys.G);
    test::check_same_hierarchy(one, other);
  }
  omp_set_num_threads(threads);
}

TEST_CASE("counting_sort: the stable order, for keys near the items' order and for scattered ones", "[cmg]") {
  // 600,000 items: up to 9 chunks of counts, each over its own range of keys (or all of them).
  const int32_t n = 600000, keys = 150000;
  std::mt19937 rng(7);
  std::vector<int32_t> near(static_cast<size_t>(n)), scattered(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    // Like a cluster number by first vertex: i / 4 give or take a few, some keys never used.
    near[size_t(i)] = std::clamp(i / 4 + int32_t(rng() % 7) - 3, 0, keys - 1) / 2 * 2;
    scattered[size_t(i)] = int32_t(rng() % uint32_t(keys));
  }
  for (const std::vector<int32_t>* key : {&near, &scattered}) {
    std::vector<int32_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [key](int32_t a, int32_t b) { return (*key)[a] < (*key)[b]; });
    std::vector<int32_t> want_rank(static_cast<size_t>(n)), want_ptr(static_cast<size_t>(keys) + 1, 0);
    for (int32_t r = 0; r < n; ++r) want_rank[size_t(order[size_t(r)])] = r;
    for (int32_t k : *key) ++want_ptr[size_t(k) + 1];
    std::partial_sum(want_ptr.begin(), want_ptr.end(), want_ptr.begin());
    const int saved = omp_get_max_threads();
    for (int threads : {1, 2, 3, 8, 16}) {
      omp_set_num_threads(threads);
      FillVector<int32_t> key_in(key->begin(), key->end());
      std::vector<int32_t> ptr, rank;
      counting_sort(key_in, keys, ptr, rank);
      CHECK(ptr == want_ptr);
      CHECK(rank == want_rank);
      FillVector<int32_t> fptr, frank;
      counting_sort(key_in, keys, fptr, frank);
      CHECK(std::equal(fptr.begin(), fptr.end(), want_ptr.begin(), want_ptr.end()));
      CHECK(std::equal(frank.begin(), frank.end(), want_rank.begin(), want_rank.end()));
    }
    omp_set_num_threads(saved);
  }
}

TEST_CASE("row schedules: every entry and every row once, a hub row split into pieces", "[cmg]") {
  // Rows of 0..6 entries, empty ones among them, and two hub rows longer than kLongRow, one of
  // them spanning several pieces, one ending the matrix.
  FillVector<int32_t> ptr{0};
  for (int32_t r = 0; r < 30000; ++r) {
    int32_t len = r % 7;
    if (r == 12345) len = 5 * kEntriesPerPiece + 17;
    if (r == 29999) len = kLongRow + 1;
    ptr.push_back(ptr.back() + len);
  }
  const int32_t rows = int32_t(ptr.size()) - 1;
  const int before = omp_get_max_threads();
  for (int threads : {1, 3, 8}) {
    INFO(threads << " threads");
    omp_set_num_threads(threads);
    std::vector<int32_t> row_of(size_t(ptr.back()), -1), visits(size_t(ptr.back()), 0);
    int32_t hub_pieces = 0;
    for_each_entry_piece(ptr, [&](int32_t r, int32_t begin, int32_t end) {
      CHECK(ptr[r] <= begin);
      CHECK(begin < end);
      CHECK(end <= ptr[r + 1]);
      CHECK(end - begin <= kEntriesPerPiece);
      for (int32_t k = begin; k < end; ++k) {
        row_of[size_t(k)] = r;
#pragma omp atomic
        ++visits[size_t(k)];
      }
      if (r == 12345) {
#pragma omp atomic
        ++hub_pieces;
      }
    });
    CHECK(hub_pieces >= 5);
    bool rows_right = true;
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t k = ptr[r]; k < ptr[r + 1]; ++k) rows_right = rows_right && row_of[size_t(k)] == r;
    CHECK(rows_right);
    CHECK(std::all_of(visits.begin(), visits.end(), [](int32_t v) { return v == 1; }));

    // Every non-empty row is finished once: by the one piece holding it whole, or as a split row
    // (the rows crossing piece boundaries, the hub among them).
    std::vector<int32_t> finished(size_t(rows), 0);
    for_each_entry_piece(ptr, [&](int32_t r, int32_t begin, int32_t end) {
      if (whole_row(ptr, r, begin, end)) {
#pragma omp atomic
        ++finished[size_t(r)];
      }
    });
    int32_t split = 0;
    for_each_split_row(ptr, [&](int32_t r) {
#pragma omp atomic
      ++finished[size_t(r)];
#pragma omp atomic
      ++split;
      CHECK(ptr[r + 1] - ptr[r] > 0);
    });
    CHECK(split >= 2);  // the hub of 5 pieces and more, and rows across the boundaries
    bool once = true;
    for (int32_t r = 0; r < rows; ++r) once = once && finished[size_t(r)] == (ptr[r + 1] > ptr[r] ? 1 : 0);
    CHECK(once);

    std::vector<int32_t> row_visits(size_t(rows), 0);
    for_each_row_long_first(rows, [&ptr](int32_t r) { return ptr[r + 1] - ptr[r]; }, [&](int32_t r) {
#pragma omp atomic
      ++row_visits[size_t(r)];
    });
    CHECK(std::all_of(row_visits.begin(), row_visits.end(), [](int32_t v) { return v == 1; }));
  }
  omp_set_num_threads(before);
}

TEST_CASE("permute_symmetric renumbers and sorts rows, a hub row's too", "[cmg]") {
  // A star of kRadixSortRow + 3000 leaves around vertex 0 plus a path through the leaves, under a
  // random renumbering: the hub row takes the radix sort (and runs first), the others the short one.
  const int32_t n = kRadixSortRow + 3001;
  std::vector<std::vector<std::pair<int32_t, double>>> rows(static_cast<size_t>(n));
  auto edge = [&rows](int32_t i, int32_t j, double w) {
    rows[size_t(i)].push_back({j, -w});
    rows[size_t(j)].push_back({i, -w});
  };
  for (int32_t i = 1; i < n; ++i) edge(0, i, 1.0 + i);
  for (int32_t i = 1; i + 1 < n; ++i) edge(i, i + 1, 0.5 / i);
  CsrMatrix A;
  A.rows = n;
  A.ptr.assign(1, 0);
  for (auto& row : rows) {
    std::sort(row.begin(), row.end());
    for (const auto& [j, w] : row) {
      A.col.push_back(j);
      A.val.push_back(w);
    }
    A.ptr.push_back(int32_t(A.col.size()));
  }
  std::vector<int32_t> new_of_old(static_cast<size_t>(n));
  std::iota(new_of_old.begin(), new_of_old.end(), 0);
  std::shuffle(new_of_old.begin(), new_of_old.end(), std::mt19937(7));
  std::vector<double> diagonal(3, 1.0);
  const CsrMatrix B = permute_symmetric(A, new_of_old, &diagonal);
  REQUIRE(B.rows == n);
  // No row stores its diagonal: zeros, as CsrMatrix::diagonal gives.
  CHECK(diagonal == std::vector<double>(size_t(n), 0.0));
  REQUIRE(B.ptr.back() == A.ptr.back());
  int wrong = 0;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t r = new_of_old[size_t(i)];
    REQUIRE(B.ptr[r + 1] - B.ptr[r] == A.ptr[i + 1] - A.ptr[i]);
    for (int32_t k = B.ptr[r] + 1; k < B.ptr[r + 1]; ++k) wrong += B.col[k - 1] >= B.col[k];
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k) {
      const int32_t c = new_of_old[size_t(A.col[k])];
      const auto at = std::lower_bound(B.col.begin() + B.ptr[r], B.col.begin() + B.ptr[r + 1], c);
      wrong += at == B.col.begin() + B.ptr[r + 1] || *at != c || B.val[size_t(at - B.col.begin())] != A.val[k];
    }
  }
  CHECK(wrong == 0);
}

TEST_CASE("the CPU cycle gives the same bits on any number of threads, with either smoother", "[cmg]") {
  // 45k unknowns: level 0 runs its loops on every thread (cmg_preconditioner.cpp), the smaller
  // levels on one, so 1, 3 and 8 threads split the work differently.
  const test::GridSystem sys = grid(150, 2);
  const std::vector<double> r = test::random_vector(size_t(sys.G.rows), 5);
  const int before = omp_get_max_threads();
  for (CmgSmoother smoother : {CmgSmoother::jacobi, CmgSmoother::sgs}) {
    INFO(cmg_smoother_name(smoother));
    CmgOptions options;
    options.smoother = smoother;
    const CmgPreconditioner M(sys.G, options);
    REQUIRE(M.levels().size() >= 3);
    std::vector<std::vector<double>> z;
    for (int threads : {1, 3, 8}) {
      omp_set_num_threads(threads);
      z.emplace_back(r.size());
      M.apply(r.data(), z.back().data());
    }
    CHECK(z[0] == z[1]);
    CHECK(z[0] == z[2]);
  }
  omp_set_num_threads(before);
}

TEST_CASE("the coarsest factor solves the grounded Laplacian exactly", "[cmg]") {
  const test::GridSystem sys = grid(12, 1);
  const CsrMatrix L = sdd_to_laplacian(sys.G);
  const CoarseFactor f = factor_coarsest(L);
  REQUIRE(f.L.rows == L.rows - 1);
  // Right-hand side summing to zero (in the range of L); the solution has x[grounded] = 0.
  std::vector<double> r = test::random_vector(static_cast<size_t>(L.rows), 7);
  const double mean = std::accumulate(r.begin(), r.end(), 0.0) / double(r.size());
  for (double& v : r) v -= mean;
  std::vector<double> x(r.size()), scratch(static_cast<size_t>(f.L.rows)), Lx(r.size());
  solve_coarsest(f, r.data(), x.data(), scratch.data());
  CHECK(x[f.grounded] == 0.0);
  L.multiply(x.data(), Lx.data());
  CHECK(test::max_abs_difference(Lx, r) <= 1e-11);
  // L is lower triangular with the diagonal last, Lt its transpose with the diagonal first.
  for (int32_t i = 0; i < f.L.rows; ++i) {
    REQUIRE(f.L.col[f.L.ptr[i + 1] - 1] == i);
    REQUIRE(f.Lt.col[f.Lt.ptr[i]] == i);
    REQUIRE(f.L.val[f.L.ptr[i + 1] - 1] == f.Lt.val[f.Lt.ptr[i]]);
  }
  CHECK(f.L.nnz() == f.Lt.nnz());
}

TEST_CASE("v_cycle_ratio: t_l = 1 where the next level holds at most 1/ratio of level 0", "[cmg]") {
  const test::GridSystem sys = grid(317, 2);
  CmgOptions o;
  o.v_cycle_rows = 0;  // the ratio alone
  o.v_cycle_ratio = 64;
  o.max_repeats = 0;
  const CmgHierarchy h = build_cmg_hierarchy(sys.G, o);
  int capped = 0, repeated = 0;
  for (size_t l = 0; l + 1 < h.levels.size(); ++l) {
    INFO("level " << l);
    const CsrMatrix &A = h.levels[l].A, &next = h.levels[l + 1].A;
    const int w_cycle = std::max(1, int(std::floor(double(A.nnz()) / double(next.nnz()) - 1)));
    const bool small = int64_t(next.rows) * 64 <= h.levels[0].A.rows;
    CHECK(h.levels[l].repeats == (small ? 1 : w_cycle));
    capped += small && w_cycle > 1;
    repeated += h.levels[l].repeats > 1;
  }
  CHECK(capped > 0);    // the cap changed a level's repeats
  CHECK(repeated > 0);  // and left the W-cycle above it
}

TEST_CASE("the CMG preconditioner is symmetric and positive definite", "[cmg]") {
  // v_cycle_rows 0: the W-cycle on every level (repeats 2 and more); 1 << 30: a V-cycle.
  for (auto [via_stride, v_cycle_rows] : {std::pair{1, 0}, std::pair{2, 0}, std::pair{1, 1 << 30}}) {
    INFO("via stride " << via_stride << ", v_cycle_rows " << v_cycle_rows);
    const test::GridSystem sys = grid(60, via_stride);
    const CmgPreconditioner M(sys.G, small_coarse(100, v_cycle_rows));
    REQUIRE(M.levels().size() >= 3);
    const auto levels = M.levels();
    CHECK(std::any_of(levels.begin(), levels.end(), [](const auto& l) { return l.repeats > 1; }) == (v_cycle_rows == 0));
    test::check_fixed_spd(M, static_cast<size_t>(sys.G.rows));
  }
}

TEST_CASE("chebyshev_rho: weighted repeats stay a fixed SPD operator, and max_repeats caps them", "[cmg]") {
  const test::GridSystem sys = grid(60, 2);
  // rho 0.9 on the W-cycle: weights for [0, rho] alone would make it indefinite (measured with
  // every level weighted: 1629 iterations on a 1M-node grid); the child's bound keeps it definite.
  for (auto [rho, max_repeats] : {std::pair{0.6, 0}, std::pair{0.9, 0}, std::pair{0.7, 2}, std::pair{0.95, 2}}) {
    INFO("chebyshev_rho " << rho << ", max_repeats " << max_repeats);
    CmgOptions o = small_coarse(100, 0);  // the W-cycle on every level
    o.v_cycle_ratio = 0;
    o.chebyshev_rho = rho;
    o.max_repeats = max_repeats;
    const CmgPreconditioner M(sys.G, o);
    const CmgHierarchy& h = M.hierarchy();
    REQUIRE(h.levels.size() >= 3);
    // From the coarsest up, independently of the builder: one repeat's error propagation has its
    // spectrum in [a, 1], a the lowest value of the child's polynomial over the child's interval
    // (0 below the exact coarsest solve); p(m) = prod_k (1 - w_k (1 - m)) must stay below 1 on
    // [a, 1) and, with t_l >= 2, be the Chebyshev polynomial of [a, rho] (largest magnitude
    // 1 / T_t(x1) there); with t_l = 1, p(m) = m (no weights).
    double a = 0;
    int weighted = 0;
    for (size_t l = h.levels.size() - 1; l-- > 0;) {
      const CmgLevel& level = h.levels[l];
      INFO("level " << l);
      const int t = level.repeats;
      if (max_repeats > 0) CHECK(t <= max_repeats);
      REQUIRE(level.weights.size() == (t > 1 ? size_t(t) : 0));
      weighted += t > 1;
      auto p = [&level, t](double m) {
        double v = 1;
        for (int k = 0; k < t; ++k) v *= 1 - (level.weights.empty() ? 1.0 : level.weights[size_t(k)]) * (1 - m);
        return v;
      };
      double largest = 0, highest = -1, lowest = 0;
      for (int s = 0; s <= 4000; ++s) {
        const double m = a + (1 - a) * s / 4000.0;
        if (m <= rho) largest = std::max(largest, std::abs(p(m)));
        if (s < 4000) highest = std::max(highest, p(m));
        lowest = std::min(lowest, p(m));
      }
      if (t > 1) CHECK(largest == Approx(1.0 / std::cosh(t * std::acosh((2 - a - rho) / (rho - a)))).epsilon(1e-4));
      CHECK(highest < 1);
      a = lowest;
    }
    CHECK(weighted > 0);
    test::check_fixed_spd(M, static_cast<size_t>(sys.G.rows));
  }
  CmgOptions bad;
  bad.chebyshev_rho = 1;
  CHECK_THROWS_AS(build_cmg_hierarchy(sys.G, bad), std::invalid_argument);
  // The Gauss-Seidel cycle keeps the formula's repeats, unweighted.
  CmgOptions sgs = small_coarse(100, 0);
  sgs.v_cycle_ratio = 0;
  sgs.smoother = CmgSmoother::sgs;
  const CmgHierarchy hs = build_cmg_hierarchy(sys.G, sgs);
  CHECK(std::any_of(hs.levels.begin(), hs.levels.end(), [](const CmgLevel& l) { return l.repeats > 2; }));
  CHECK(std::all_of(hs.levels.begin(), hs.levels.end(), [](const CmgLevel& l) { return l.weights.empty(); }));
}

namespace {

// CMG-PCG to 1e-10 in at most `max_iterations`, every unknown within 1e-6 V of the direct solve.
void check_cmg_pcg(int32_t side, int32_t via_stride, const CmgOptions& options, int max_iterations) {
  const test::GridSystem sys = grid(side, via_stride);
  REQUIRE(sys.G.rows >= 100000);
  const CmgPreconditioner M(sys.G, options);
  CHECK(M.levels().size() >= 3);
  std::vector<double> x(sys.b.size(), 0.0), reference;
  SolveControl control;
  control.tolerance = 1e-10;
  const SolveResult result = pcg_cpu(sys.G, sys.b, x, M, control);
  INFO(side << "x" << side << " x 2, via stride " << via_stride << ": " << result.iterations << " iterations");
  CHECK(result.converged);
  CHECK(result.relative_residual <= 1e-10);
  CHECK(result.iterations <= max_iterations);
  solve_direct(sys.G, sys.b, reference);
  CHECK(test::max_abs_difference(x, reference) <= 1e-6);
}

}  // namespace

// Issue 3: at most 40 iterations, with the default options and with the W-cycle on every level
// (v_cycle_rows 0, 35 measured on the 200k grid).
TEST_CASE("CMG-PCG on a 100k-unknown grid with a via at every crossing", "[cmg]") {
  check_cmg_pcg(224, 1, CmgOptions{}, 40);
}

TEST_CASE("CMG-PCG on a 200k-unknown grid with wire chains", "[cmg]") {
  check_cmg_pcg(317, 2, CmgOptions{}, 40);
  CmgOptions w_cycle;
  w_cycle.v_cycle_rows = 0;
  check_cmg_pcg(317, 2, w_cycle, 40);
}

TEST_CASE("ibmpg1: CMG-PCG in at most 40 iterations, every node within 1e-6 V", "[cmg][ibmpg1]") {
  for (bool eliminate : {true, false}) {
    Options opt;
    opt.netlist = test::shared_data("ibmpg1.spice");
    opt.compare = test::shared_data("ibmpg1.solution");
    opt.eliminate = eliminate;
    const RunReport rep = run(opt);
    INFO("eliminate " << eliminate << ": " << rep.result.iterations << " iterations");
    CHECK(rep.precond == "cmg");
    CHECK(rep.result.converged);
    CHECK(rep.result.relative_residual <= 1e-10);
    CHECK(rep.result.iterations <= 40);
    CHECK(rep.levels.size() >= 3);
    REQUIRE(rep.comparison);
    CHECK(rep.comparison->matched == 30635);
    CHECK(rep.comparison->max_abs_error <= 1e-6);
  }
}

TEST_CASE("coarsening that stalls ends in an exact direct solve", "[cmg]") {
  // The complete graph K_20 with equal weights: every vertex's heaviest edge carries 1/19 of its
  // degree, under 1/8, so all are detached and clustering keeps almost every vertex.
  const int32_t n = 20;
  CsrMatrix G;
  G.rows = n;
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t j = 0; j < n; ++j) {
      G.col.push_back(j);
      G.val.push_back(i == j ? (n - 1) + (i == 0 ? 1.0 : 0.0) : -1.0);
    }
    G.ptr.push_back(static_cast<int32_t>(G.col.size()));
  }
  const CmgPreconditioner M(G, small_coarse(5));
  REQUIRE(M.levels().size() == 1);
  std::vector<double> b = test::random_vector(static_cast<size_t>(n), 3), x(static_cast<size_t>(n), 0.0);
  SolveControl control;
  const SolveResult result = pcg_cpu(G, b, x, M, control);
  CHECK(result.converged);
  CHECK(result.iterations == 1);
}
