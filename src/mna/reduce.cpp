#include "reduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <string>

#include "mna/potential_union_find.hpp"
#include "parser/input_error.hpp"
#include "parser/shown.hpp"

namespace pgsim {
namespace {

bool is_short(const Element& e) {
  return e.kind == ElementKind::Inductor || (e.kind == ElementKind::Resistor && e.value == 0.0);
}

// v(plus) - v(minus) the element forces, for sources and shorts.
double forced_difference(const Element& e) { return e.kind == ElementKind::VoltageSource ? e.value : 0.0; }

std::string element_label(const Netlist& nl, const Element& e) {
  return shown(nl.element_names[e.name]) + " (" + nl.where(e.where) + ")";
}

// The sources and shorts already merged that connect a and b: a path in the forest they form.
std::vector<uint32_t> source_path(const Netlist& nl, const std::vector<uint32_t>& merged, uint32_t a, uint32_t b) {
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adj(nl.node_count());
  for (uint32_t k : merged) {
    const Element& e = nl.elements[k];
    adj[e.plus].push_back({e.minus, k});
    adj[e.minus].push_back({e.plus, k});
  }
  std::vector<int64_t> via(nl.node_count(), -1);
  std::vector<uint32_t> prev(nl.node_count(), 0);
  std::vector<bool> seen(nl.node_count(), false);
  std::deque<uint32_t> queue{a};
  seen[a] = true;
  while (!queue.empty()) {
    uint32_t u = queue.front();
    queue.pop_front();
    if (u == b) break;
    for (auto [v, k] : adj[u])
      if (!seen[v]) {
        seen[v] = true, via[v] = k, prev[v] = u;
        queue.push_back(v);
      }
  }
  std::vector<uint32_t> path;
  for (uint32_t v = b; v != a && via[v] >= 0; v = prev[v]) path.push_back(static_cast<uint32_t>(via[v]));
  return path;
}

[[noreturn]] void conflicting_loop(const Netlist& nl, const std::vector<uint32_t>& merged, uint32_t closing,
                                   double expected, double forced) {
  const Element& e = nl.elements[closing];
  std::string names = element_label(nl, e);
  bool has_short = is_short(e);
  for (uint32_t k : source_path(nl, merged, e.plus, e.minus)) {
    names += ", " + element_label(nl, nl.elements[k]);
    has_short |= is_short(nl.elements[k]);
  }
  char diff[128];
  std::snprintf(diff, sizeof diff, "they force %.9g V and %.9g V across the same pair of nodes", forced, expected);
  const char* what = has_short ? "voltage sources and shorts (0-ohm resistors, inductors)" : "voltage sources";
  throw InputError(std::string(what) + " in a loop disagree (" + diff + "): " + names);
}

}  // namespace

ReducedSystem reduce(const Netlist& nl) {
  const uint32_t n_nodes = nl.node_count();
  bool has_source = false;
  PotentialUnionFind uf(n_nodes);
  std::vector<uint32_t> merged;  // elements that merged two sets, to name a conflicting loop

  // 1. Voltage sources, zero-ohm resistors and inductors merge nodes into super-nodes.
  for (uint32_t k = 0; k < nl.elements.size(); ++k) {
    const Element& e = nl.elements[k];
    if (e.kind == ElementKind::VoltageSource || e.kind == ElementKind::CurrentSource) has_source = true;
    if (e.kind != ElementKind::VoltageSource && !is_short(e)) continue;
    const double forced = forced_difference(e);
    uint32_t ra = uf.find(e.plus), rb = uf.find(e.minus);
    if (ra == rb) {
      double implied = uf.offset(e.plus) - uf.offset(e.minus);
      if (std::abs(implied - forced) > 1e-9 * std::max(1.0, std::abs(forced)))
        conflicting_loop(nl, merged, k, implied, forced);
      continue;
    }
    uf.unite(e.plus, e.minus, forced);
    merged.push_back(k);
  }
  if (!has_source) throw InputError(nl.files[0] + ": the netlist has no voltage or current sources");

  // 2. Number the unknowns: every super-node not holding ground, in order of first node.
  ReducedSystem sys;
  sys.unknown_of_node.assign(n_nodes, -1);
  sys.offset_of_node.assign(n_nodes, 0.0);
  const uint32_t ground_root = uf.find(Netlist::ground);
  const double ground_offset = uf.offset(Netlist::ground);
  std::vector<int32_t> unknown_of_root(n_nodes, -1);
  std::vector<double> base_offset;  // per unknown: v(node_of_unknown) - v(root), so x is that node's voltage
  int32_t n = 0;
  for (uint32_t v = 0; v < n_nodes; ++v) {
    uint32_t r = uf.find(v);
    if (r == ground_root) {
      sys.offset_of_node[v] = uf.offset(v) - ground_offset;
      continue;
    }
    if (unknown_of_root[r] < 0) {
      unknown_of_root[r] = n++;
      sys.node_of_unknown.push_back(v);
      base_offset.push_back(uf.offset(v));
    }
    sys.unknown_of_node[v] = unknown_of_root[r];
    sys.offset_of_node[v] = uf.offset(v) - base_offset[static_cast<size_t>(unknown_of_root[r])];
  }

  // 3. Stamp resistors and current sources. Off-diagonals are gathered per row, then sorted.
  std::vector<double> diag(static_cast<size_t>(n), 0.0);
  sys.b.assign(static_cast<size_t>(n), 0.0);
  std::vector<int64_t> count(static_cast<size_t>(n) + 1, 0);
  auto for_each_conductance = [&](auto&& stamp) {
    for (const Element& e : nl.elements)
      if (e.kind == ElementKind::Resistor && e.value > 0) stamp(e);
  };
  for_each_conductance([&](const Element& e) {
    int32_t ua = sys.unknown_of_node[e.plus], ub = sys.unknown_of_node[e.minus];
    if (ua >= 0 && ub >= 0 && ua != ub) ++count[ua + 1], ++count[ub + 1];
  });
  for (int32_t i = 0; i < n; ++i) count[i + 1] += count[i];
  std::vector<int32_t> off_col(static_cast<size_t>(count[n]));
  std::vector<double> off_val(static_cast<size_t>(count[n]));
  std::vector<int64_t> fill(count.begin(), count.end() - 1);
  std::vector<uint8_t> touches_fixed(static_cast<size_t>(n), 0);
  for_each_conductance([&](const Element& e) {
    const double g = 1.0 / e.value;
    int32_t ua = sys.unknown_of_node[e.plus], ub = sys.unknown_of_node[e.minus];
    double oa = sys.offset_of_node[e.plus], ob = sys.offset_of_node[e.minus];
    // Current leaving through the resistor from plus: g (x_a + oa - x_b - ob).
    if (ua >= 0 && ub >= 0) {
      if (ua == ub) return;  // both ends in one super-node: a resistor across a source
      diag[ua] += g, diag[ub] += g;
      sys.b[ua] -= g * (oa - ob), sys.b[ub] -= g * (ob - oa);
      off_col[fill[ua]] = ub, off_val[fill[ua]++] = -g;
      off_col[fill[ub]] = ua, off_val[fill[ub]++] = -g;
    } else if (ua >= 0) {
      diag[ua] += g, sys.b[ua] += g * (ob - oa), touches_fixed[ua] = 1;
    } else if (ub >= 0) {
      diag[ub] += g, sys.b[ub] += g * (oa - ob), touches_fixed[ub] = 1;
    }
  });
  for (const Element& e : nl.elements) {
    if (e.kind != ElementKind::CurrentSource) continue;
    // SPICE: a positive source drives current out of its plus node, through itself, into minus.
    if (int32_t ua = sys.unknown_of_node[e.plus]; ua >= 0) sys.b[ua] -= e.value;
    if (int32_t ub = sys.unknown_of_node[e.minus]; ub >= 0) sys.b[ub] += e.value;
  }

  // 4. Floating components: unknowns with no resistive path to a fixed node.
  {
    std::vector<int32_t> comp(static_cast<size_t>(n), -1);
    std::vector<int32_t> stack;
    for (int32_t s = 0; s < n; ++s) {
      if (comp[s] >= 0) continue;
      bool anchored = false;
      int64_t nodes = 0;
      comp[s] = s;
      stack.assign(1, s);
      while (!stack.empty()) {
        int32_t u = stack.back();
        stack.pop_back();
        anchored |= touches_fixed[u] != 0;
        ++nodes;
        for (int64_t k = count[u]; k < count[u + 1]; ++k)
          if (comp[off_col[k]] < 0) comp[off_col[k]] = s, stack.push_back(off_col[k]);
      }
      if (!anchored) {
        int64_t netlist_nodes = 0;
        for (uint32_t v = 0; v < n_nodes; ++v)
          if (sys.unknown_of_node[v] >= 0 && comp[sys.unknown_of_node[v]] == s) ++netlist_nodes;
        throw InputError("floating part of the circuit: " + std::to_string(netlist_nodes) + " node(s), among them " +
                         shown(nl.node_names[sys.node_of_unknown[s]]) +
                         ", have no resistive path to ground or to a voltage source");
      }
    }
  }

  // 5. CSR with sorted columns, parallel resistors summed, diagonal in place.
  CsrMatrix& G = sys.G;
  G.rows = n;
  if (count[n] + n > INT32_MAX) throw InputError("the system has more than 2^31 nonzeros, beyond this build's index width");
  G.ptr.assign(static_cast<size_t>(n) + 1, 0);
  G.col.reserve(static_cast<size_t>(count[n] + n));
  G.val.reserve(static_cast<size_t>(count[n] + n));
  std::vector<std::pair<int32_t, double>> row;
  for (int32_t i = 0; i < n; ++i) {
    row.clear();
    for (int64_t k = count[i]; k < count[i + 1]; ++k) row.push_back({off_col[k], off_val[k]});
    row.push_back({i, diag[i]});
    std::sort(row.begin(), row.end(), [](auto& x, auto& y) { return x.first < y.first; });
    for (size_t k = 0; k < row.size(); ++k) {
      if (k > 0 && row[k].first == row[k - 1].first) {
        G.val.back() += row[k].second;
        continue;
      }
      G.col.push_back(row[k].first);
      G.val.push_back(row[k].second);
    }
    G.ptr[i + 1] = static_cast<int32_t>(G.col.size());
  }
  return sys;
}

std::vector<double> node_voltages(const ReducedSystem& sys, const std::vector<double>& x) {
  std::vector<double> v(sys.unknown_of_node.size());
  for (size_t i = 0; i < v.size(); ++i) {
    int32_t u = sys.unknown_of_node[i];
    v[i] = sys.offset_of_node[i] + (u >= 0 ? x[u] : 0.0);
  }
  return v;
}

}  // namespace pgsim
