// find_duplicate_names (parser/duplicate_names.hpp) against a plain map, on enough names to take
// many shards and threads: every later element of a name, ASCII case ignored, with its first.
#include <catch2/catch.hpp>

#include <omp.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "parser/duplicate_names.hpp"

using namespace pgsim;

TEST_CASE("find_duplicate_names: every repeat with its first element, any case, any thread count", "[parser]") {
  std::mt19937 rng(3);
  NameTable names;
  std::map<std::string, uint32_t> first;
  std::vector<DuplicateName> expected;
  uint64_t bytes = 0;
  constexpr uint32_t kNames = 300000;  // past one shard's 8192 and the one-thread limit
  for (uint32_t i = 0; i < kNames; ++i) {
    // Lengths 1 to 20 (partial last words of every size); a pool small enough for many repeats.
    std::string name = "r" + std::to_string(rng() % 200000);
    name += std::string(rng() % 12, 'x');
    std::string key = name;
    for (char& c : name)
      if (rng() % 3 == 0) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    names.extend(1, name.size());  // as the parser appends names
    names.place(i, bytes, name);
    bytes += name.size();
    const auto [it, added] = first.emplace(key, i);
    if (!added) expected.push_back({i, it->second});
  }
  REQUIRE(expected.size() > 10000);
  const int saved = omp_get_max_threads();
  for (int threads : {1, 4}) {
    omp_set_num_threads(threads);
    const std::vector<DuplicateName> got = find_duplicate_names(names);
    REQUIRE(got.size() == expected.size());
    for (size_t k = 0; k < got.size(); ++k) {
      INFO("threads " << threads << ", duplicate " << k);
      REQUIRE(got[k].element == expected[k].element);
      REQUIRE(got[k].first == expected[k].first);
    }
  }
  omp_set_num_threads(saved);
  CHECK(find_duplicate_names(NameTable()).empty());
}
