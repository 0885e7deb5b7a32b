// select_ranks (mna/parallel_select.hpp): exact order statistics on all threads, against
// std::nth_element on a copy, for arrays that take its counting passes (and small ones that do
// not), with ties, signs, zeros of both signs, values sharing all their top 28 key bits, and
// extreme magnitudes; for segmented arrays, ranks among single segments and runs of them; the
// array is left unchanged, and bad input is refused.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "mna/parallel_select.hpp"

using pgsim::RankQuery;
using pgsim::select_ranks;

namespace {

double nth(std::vector<double> v, size_t r) {
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(r), v.end());
  return v[r];
}

void check_all(const std::vector<double>& v) {
  const std::vector<double> before = v;
  const size_t n = v.size();
  const std::vector<size_t> ranks = {0, n / 2, (9 * n) / 10, n - 1, (99 * n) / 100, 1 % n};
  for (int threads : {1, 3, 8}) {
    INFO("threads " << threads << ", n " << n);
    omp_set_num_threads(threads);
    const std::vector<double> got = select_ranks(v.data(), n, ranks);
    REQUIRE(got.size() == ranks.size());
    for (size_t j = 0; j < ranks.size(); ++j) {
      INFO("rank " << ranks[j]);
      const double want = nth(v, ranks[j]);
      CHECK(got[j] == want);  // -0.0 == 0.0 too: the two rank alike
      if (want == 0) CHECK(!std::signbit(got[j]));
    }
  }
  CHECK(v == before);
}

}  // namespace

TEST_CASE("select_ranks gives nth_element's values on any thread count and leaves the array alone", "[mna][parallel]") {
  const int threads_before = omp_get_max_threads();
  std::mt19937_64 rng(11);
  const size_t big = (size_t(1) << 20) + 12345;  // well past the one-thread fallback (2^17)
  SECTION("IR drops: values in a narrow band, so that most share their top key bits") {
    std::uniform_real_distribution<double> drop(0.09, 0.1);
    std::vector<double> v(big);
    for (double& x : v) x = drop(rng);
    check_all(v);
  }
  SECTION("ties, both signs, signed zeros, extremes") {
    std::vector<double> v(big);
    std::uniform_int_distribution<int> pick(0, 9);
    std::normal_distribution<double> normal(0, 1);
    for (double& x : v) {
      switch (pick(rng)) {
        case 0: x = 0.0; break;
        case 1: x = -0.0; break;
        case 2: x = 0.1; break;
        case 3: x = -std::numeric_limits<double>::max(); break;
        case 4: x = std::numeric_limits<double>::denorm_min(); break;
        case 5: x = std::numeric_limits<double>::infinity(); break;
        default: x = normal(rng);
      }
    }
    check_all(v);
  }
  SECTION("one value repeated") { check_all(std::vector<double>(big, -2.5)); }
  SECTION("neighbouring doubles: the same top 28 key bits, told apart in the last pass") {
    std::vector<double> v(big);
    double x = 1.0;
    for (double& y : v) y = x = std::nextafter(x, 2.0);
    std::shuffle(v.begin(), v.end(), rng);
    check_all(v);
  }
  SECTION("small arrays (one thread, from a copy), and both sides of that fallback's limit") {
    for (size_t n : {size_t(1), size_t(2), size_t(7), size_t(1000), size_t(131071), size_t(131073)}) {
      std::vector<double> v(n);
      std::normal_distribution<double> normal(0, 1);
      for (double& y : v) y = normal(rng);
      check_all(v);
    }
  }
  omp_set_num_threads(threads_before);
}

TEST_CASE("select_ranks refuses a rank past the end and NaN values", "[mna]") {
  std::vector<double> v(2000000, 1.0);
  CHECK_THROWS_AS(select_ranks(v.data(), v.size(), {v.size()}), std::invalid_argument);
  v[1234567] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(select_ranks(v.data(), v.size(), {0}), std::invalid_argument);
}

TEST_CASE("select_ranks over segments: each query's ranks among its run of segments", "[mna][parallel]") {
  const int threads_before = omp_get_max_threads();
  std::mt19937_64 rng(5);
  // Segments of unlike sizes and values (the IR-drop report's layers of two kinds, side by side):
  // empty ones, ones smaller than a thread's share, ones that span several shares, ties across
  // segments, and values of the same top key bits in neighbouring segments.
  const std::vector<size_t> sizes = {300000, 0, 17, 250000, 1, 0, 120000, 90000, 3};
  std::vector<size_t> bounds = {0};
  std::vector<double> v;
  for (size_t s = 0; s < sizes.size(); ++s) {
    std::uniform_real_distribution<double> drop(0.01 * double(s), 0.01 * double(s) + 0.02);
    for (size_t i = 0; i < sizes[s]; ++i) v.push_back(s % 3 == 0 ? std::round(drop(rng) * 1e4) / 1e4 : drop(rng));
    bounds.push_back(v.size());
  }
  const std::vector<double> before = v;
  std::vector<RankQuery> queries;
  auto ranks_of = [](size_t n) { return std::vector<size_t>{0, n / 2, (9 * n) / 10, (99 * n) / 100, n - 1}; };
  for (size_t s = 0; s < sizes.size(); ++s)
    if (sizes[s]) queries.push_back({s, s + 1, ranks_of(sizes[s])});
  queries.push_back({0, 4, ranks_of(bounds[4])});                            // runs of segments,
  queries.push_back({4, sizes.size(), ranks_of(v.size() - bounds[4])});      // overlapping others
  queries.push_back({0, sizes.size(), ranks_of(v.size())});
  queries.push_back({1, 2, {}});  // an empty segment, no ranks
  for (int threads : {1, 2, 3, 8}) {
    INFO("threads " << threads);
    omp_set_num_threads(threads);
    const std::vector<std::vector<double>> got = select_ranks(v.data(), bounds, queries);
    REQUIRE(got.size() == queries.size());
    for (size_t q = 0; q < queries.size(); ++q) {
      const std::vector<double> values(v.begin() + std::ptrdiff_t(bounds[queries[q].first]),
                                       v.begin() + std::ptrdiff_t(bounds[queries[q].end]));
      REQUIRE(got[q].size() == queries[q].ranks.size());
      for (size_t j = 0; j < queries[q].ranks.size(); ++j) {
        INFO("query " << q << ", rank " << queries[q].ranks[j]);
        CHECK(got[q][j] == nth(values, queries[q].ranks[j]));
      }
    }
  }
  CHECK(v == before);
  // Below the counting passes' size, the same answers from copies.
  const std::vector<size_t> small_bounds = {0, 10, 10, 25};
  const std::vector<std::vector<double>> small =
      select_ranks(v.data(), small_bounds, {{0, 1, {0, 9}}, {0, 3, {24, 12}}, {2, 3, {14}}});
  CHECK(small[0] == std::vector<double>{nth({v.begin(), v.begin() + 10}, 0), nth({v.begin(), v.begin() + 10}, 9)});
  CHECK(small[1] == std::vector<double>{nth({v.begin(), v.begin() + 25}, 24), nth({v.begin(), v.begin() + 25}, 12)});
  CHECK(small[2] == std::vector<double>{nth({v.begin() + 10, v.begin() + 25}, 14)});
  omp_set_num_threads(threads_before);
}

TEST_CASE("select_ranks refuses bad segments and queries", "[mna]") {
  std::vector<double> v(200000, 1.0);
  const std::vector<size_t> bounds = {0, 100000, 200000};
  CHECK_THROWS_AS(select_ranks(v.data(), {0, 200000, 100000}, {}), std::invalid_argument);  // not rising
  CHECK_THROWS_AS(select_ranks(v.data(), {5, 200000}, {}), std::invalid_argument);          // not from 0
  CHECK_THROWS_AS(select_ranks(v.data(), bounds, {{1, 3, {0}}}), std::invalid_argument);    // past the last segment
  CHECK_THROWS_AS(select_ranks(v.data(), bounds, {{1, 0, {}}}), std::invalid_argument);     // backwards
  CHECK_THROWS_AS(select_ranks(v.data(), bounds, {{1, 2, {100000}}}), std::invalid_argument);  // rank past its segment
  v[150000] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(select_ranks(v.data(), bounds, {{1, 2, {0}}}), std::invalid_argument);
  CHECK(select_ranks(v.data(), bounds, {{0, 1, {99999}}}).front() == std::vector<double>{1.0});  // NaN not queried
}
