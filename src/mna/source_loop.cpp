#include "mna/source_loop.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <stdexcept>

namespace pgsim {
namespace {

// The edges already merged that connect a and b: a path in the forest they form.
std::vector<size_t> merged_path(const std::vector<MergeEdge>& edges, const std::vector<size_t>& merged, uint32_t nodes,
                                uint32_t a, uint32_t b) {
  std::vector<std::vector<std::pair<uint32_t, size_t>>> adj(nodes);
  for (size_t k : merged) {
    adj[edges[k].plus].push_back({edges[k].minus, k});
    adj[edges[k].minus].push_back({edges[k].plus, k});
  }
  std::vector<int64_t> via(nodes, -1);
  std::vector<uint32_t> prev(nodes, 0);
  std::vector<bool> seen(nodes, false);
  std::deque<uint32_t> queue{a};
  seen[a] = true;
  while (!queue.empty()) {
    uint32_t u = queue.front();
    queue.pop_front();
    if (u == b) break;
    for (auto [v, k] : adj[u])
      if (!seen[v]) {
        seen[v] = true, via[v] = int64_t(k), prev[v] = u;
        queue.push_back(v);
      }
  }
  std::vector<size_t> path;
  for (uint32_t v = b; v != a && via[v] >= 0; v = prev[v]) path.push_back(size_t(via[v]));
  return path;
}

}  // namespace

bool disagrees(const MergeEdge& e, PotentialUnionFind& uf, std::vector<uint32_t>& path, bool& merged, double& implied) {
  merged = false;
  if (uf.find(e.plus, path) != uf.find(e.minus, path)) {
    uf.unite(e.plus, e.minus, e.forced, path);
    merged = true;
    return false;
  }
  implied = uf.offset(e.plus) - uf.offset(e.minus);
  return std::abs(implied - e.forced) > 1e-9 * std::max(1.0, std::abs(e.forced));
}

DisagreeingLoop find_disagreeing_loop(const std::vector<MergeEdge>& edges, uint32_t nodes, size_t bad) {
  PotentialUnionFind uf(nodes);
  std::vector<uint32_t> path;
  std::vector<size_t> merged;
  for (size_t i = 0; i <= bad; ++i) {
    const MergeEdge& e = edges[i];
    bool joined = false;
    double implied = 0;
    if (disagrees(e, uf, path, joined, implied)) {
      DisagreeingLoop loop;
      loop.members.push_back(i);
      for (size_t k : merged_path(edges, merged, nodes, e.plus, e.minus)) loop.members.push_back(k);
      for (size_t k : loop.members) loop.has_short |= edges[k].is_short;
      loop.forced = e.forced;
      loop.implied = implied;
      return loop;
    }
    if (joined) merged.push_back(i);
  }
  throw std::logic_error("reduce: the disagreeing loop was not found again");
}

std::string loop_message(const DisagreeingLoop& loop, const std::vector<std::string>& labels) {
  std::string names;
  for (const std::string& label : labels) names += (names.empty() ? "" : ", ") + label;
  char diff[128];
  std::snprintf(diff, sizeof diff, "they force %.9g V and %.9g V across the same pair of nodes", loop.forced,
                loop.implied);
  const char* what = loop.has_short ? "voltage sources and shorts (0-ohm resistors, inductors)" : "voltage sources";
  return std::string(what) + " in a loop disagree (" + diff + "): " + names;
}

}  // namespace pgsim
