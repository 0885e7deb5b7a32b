#include "mna/chain_elimination.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"
#include "parser/default_init.hpp"

namespace pgsim {
namespace {

// A degree-2 elimination rewrites one slot in each neighbour's row after searching it: rows longer
// than this (hubs, pads) are not searched, so the whole pass stays linear.
constexpr int32_t kMaxSearchedRow = 64;

// The system being eliminated, in place: G's rows with the diagonal replaced by the excess
// e_v = G_vv - sum_j |G_vj| (kept apart so long chains do not cancel digits), conductances
// w = |G_vj| > 0 in the off-diagonal slots, and slots of removed edges or unknowns skipped.
// Its arrays are FillVectors: resize() leaves them unwritten, and the first parallel loop writes
// every element (std::vector's resize would first zero them on one thread, a serial pass over
// hundreds of MB at millions of unknowns).
struct WorkGraph {
  const FillVector<int32_t>& ptr;
  FillVector<int32_t> col;  // -1: a dead slot
  FillVector<double> w;
  FillVector<double> excess, rhs;
  FillVector<int32_t> degree;
  FillVector<char> alive;

  bool live(int32_t k) const { return col[k] >= 0 && alive[col[k]]; }
  int32_t find(int32_t row, int32_t target) const {
    for (int32_t k = ptr[row]; k < ptr[row + 1]; ++k)
      if (col[k] == target) return k;
    return -1;
  }
};

}  // namespace

EliminatedSystem eliminate_chains(const CsrMatrix& G, const std::vector<double>& b,
                                  const std::vector<uint8_t>* pinned) {
  const int32_t n = G.rows;
  const size_t un = static_cast<size_t>(n);
  WorkGraph g{G.ptr, {}, {}, {}, {}, {}, {}};
  g.col.resize(G.col.size());
  g.w.resize(G.val.size());
  g.excess.resize(un);
  g.rhs.resize(un);
  g.degree.resize(un);
  g.alive.resize(un);
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) {
    g.rhs[v] = b[v];
    double diag = 0, off = 0;
    int32_t degree = 0;
    for (int32_t k = G.ptr[v]; k < G.ptr[v + 1]; ++k) {
      g.col[k] = G.col[k];
      if (G.col[k] == v || G.val[k] == 0) {
        if (G.col[k] == v) diag = G.val[k];
        g.col[k] = -1;
        g.w[k] = 0;
        continue;
      }
      g.w[k] = std::fabs(G.val[k]);
      off += g.w[k];
      ++degree;
    }
    g.excess[v] = diag - off;
    g.degree[v] = degree;
    g.alive[v] = 1;
  }

  EliminatedSystem out;
  out.original_unknowns = n;
  // At most one step per unknown: reserved (address space only until written), so the vector is
  // never copied while it grows.
  out.steps.reserve(un);
  std::vector<int32_t> stack;
  auto lower_degree = [&](int32_t v) {
    if (--g.degree[v] <= 2) stack.push_back(v);
  };

  // Depth first from each low-degree unknown in index order: a neighbour whose degree drops is
  // eliminated next, while its row is still in cache.
  auto eliminate = [&](int32_t v) {
    if (!g.alive[v] || g.degree[v] > 2 || (pinned != nullptr && (*pinned)[size_t(v)])) return;
    EliminatedSystem::Step s;
    s.v = v;
    int32_t slot[2] = {-1, -1};
    int found = 0;
    for (int32_t k = g.ptr[v]; k < g.ptr[v + 1] && found < 2; ++k)
      if (g.live(k)) slot[found++] = k;
    s.diag = g.excess[v];
    for (int i = 0; i < found; ++i) s.diag += g.w[slot[i]];
    if (!(s.diag > 0)) return;  // an isolated unknown without a tie to a source: left to the solver
    if (found == 2 && (g.ptr[g.col[slot[0]] + 1] - g.ptr[g.col[slot[0]]] > kMaxSearchedRow ||
                       g.ptr[g.col[slot[1]] + 1] - g.ptr[g.col[slot[1]]] > kMaxSearchedRow))
      return;
    s.rhs = g.rhs[v];
    if (found >= 1) {
      s.a = g.col[slot[0]];
      s.w_a = g.w[slot[0]];
    }
    if (found == 2) {
      s.b = g.col[slot[1]];
      s.w_b = g.w[slot[1]];
    }
    g.alive[v] = 0;
    out.steps.push_back(s);
    // Schur complement of v: each neighbour u gains w_u e_v / d in excess and w_u rhs_v / d in
    // its right-hand side; two neighbours gain the edge w_a w_b / d between them.
    for (int i = 0; i < found; ++i) {
      const int32_t u = i == 0 ? s.a : s.b;
      const double w = i == 0 ? s.w_a : s.w_b;
      g.excess[u] += w * g.excess[v] / s.diag;
      g.rhs[u] += w * s.rhs / s.diag;
    }
    if (found == 1) {
      lower_degree(s.a);
    } else if (found == 2) {
      const double w_ab = s.w_a * s.w_b / s.diag;
      const int32_t a_to_v = g.find(s.a, v), b_to_v = g.find(s.b, v);
      const int32_t a_to_b = g.find(s.a, s.b);
      if (a_to_b >= 0 && g.alive[s.b]) {  // a and b already adjacent: the edge gets heavier
        const int32_t b_to_a = g.find(s.b, s.a);
        g.w[a_to_b] += w_ab;
        g.w[b_to_a] += w_ab;
        g.col[a_to_v] = -1;
        g.col[b_to_v] = -1;
        lower_degree(s.a);
        lower_degree(s.b);
      } else {  // v's slots in a's and b's rows become the new edge
        g.col[a_to_v] = s.b;
        g.w[a_to_v] = w_ab;
        g.col[b_to_v] = s.a;
        g.w[b_to_v] = w_ab;
      }
    }
  };
  for (int32_t start = 0; start < n; ++start) {
    if (g.degree[start] > 2) continue;
    stack.push_back(start);
    while (!stack.empty()) {
      const int32_t v = stack.back();
      stack.pop_back();
      eliminate(v);
    }
  }

  // The kept system, in the original order: kept unknown v gets the number of kept unknowns before it.
  std::vector<int32_t> new_index;
  assign_touched(new_index, un);
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) new_index[v] = g.alive[v] ? 1 : 0;
  prefix_sum(new_index);
  const int32_t m = n > 0 ? new_index[un - 1] : 0;
  assign_touched(out.kept, static_cast<size_t>(m));
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) {
    if (g.alive[v]) {
      --new_index[v];
      out.kept[new_index[v]] = v;
    } else {
      new_index[v] = -1;
    }
  }
  CsrMatrix& S = out.G;
  S.rows = m;
  assign_touched(S.ptr, static_cast<size_t>(m) + 1);
  assign_touched(out.b, static_cast<size_t>(m));
#pragma omp parallel for schedule(static, 4096)
  for (int32_t r = 0; r < m; ++r) {
    const int32_t v = out.kept[r];
    S.ptr[r + 1] = g.degree[v] + 1;
    out.b[r] = g.rhs[v];
  }
  prefix_sum(S.ptr);
  assign_touched(S.col, static_cast<size_t>(S.ptr[m]));
  assign_touched(S.val, S.col.size());
#pragma omp parallel for schedule(static, 4096)
  for (int32_t r = 0; r < m; ++r) {
    const int32_t v = out.kept[r];
    int32_t at = S.ptr[r];
    double diag = g.excess[v];
    for (int32_t k = g.ptr[v]; k < g.ptr[v + 1]; ++k) {
      if (!g.live(k)) continue;
      S.col[at] = new_index[g.col[k]];
      S.val[at] = -g.w[k];
      diag += g.w[k];
      ++at;
    }
    S.col[at] = r;
    S.val[at] = diag;
    ++at;
    // Rewritten slots broke the column order: sort the (short) row.
    for (int32_t i = S.ptr[r] + 1; i < at; ++i)
      for (int32_t j = i; j > S.ptr[r] && S.col[j - 1] > S.col[j]; --j) {
        std::swap(S.col[j - 1], S.col[j]);
        std::swap(S.val[j - 1], S.val[j]);
      }
  }
  return out;
}

std::vector<double> EliminatedSystem::recover(const std::vector<double>& x_kept) const {
  std::vector<double> x;
  recover(x_kept, x);
  return x;
}

namespace {

// Kept and eliminated unknowns partition the original ones: every x[i] is written once.
// rhs_of(s): the right-hand side step s saw.
template <class RhsOf>
void back_substitute(const EliminatedSystem& e, const double* x_kept, RhsOf rhs_of, double* x) {
  const auto n_kept = static_cast<int64_t>(e.kept.size());
  // A copy, a few us per 10^5 unknowns: threads only where that outweighs their fork (a transient
  // recovers every step: ibmpg1t's 15,377 kept unknowns on 2 threads took 0.3-4 ms per step on the
  // loaded 2-core development VM, one thread 0.03 ms).
#pragma omp parallel for schedule(static, 4096) if (n_kept > 262144)
  for (int64_t k = 0; k < n_kept; ++k) x[size_t(e.kept[size_t(k)])] = x_kept[size_t(k)];
  for (size_t i = e.steps.size(); i-- > 0;) {  // reverse elimination order: a and b are known by then
    const EliminatedSystem::Step& s = e.steps[i];
    double t = rhs_of(s);
    if (s.a >= 0) t += s.w_a * x[s.a];
    if (s.b >= 0) t += s.w_b * x[s.b];
    x[s.v] = t / s.diag;
  }
}

}  // namespace

void EliminatedSystem::recover(const std::vector<double>& x_kept, std::vector<double>& x) const {
  assign_touched(x, static_cast<size_t>(original_unknowns));  // pages faulted in on all threads
  back_substitute(*this, x_kept.data(), [](const Step& s) { return s.rhs; }, x.data());
}

void EliminatedSystem::condense(const double* b_full, double* rhs, double* b_kept) const {
  std::copy(b_full, b_full + original_unknowns, rhs);
  // The same Schur-complement updates as eliminate_chains made, in its order: when a step is
  // reached, every earlier step's share has arrived in rhs[s.v].
  for (const Step& s : steps) {
    if (s.a >= 0) rhs[s.a] += s.w_a * rhs[s.v] / s.diag;
    if (s.b >= 0) rhs[s.b] += s.w_b * rhs[s.v] / s.diag;
  }
  for (size_t k = 0; k < kept.size(); ++k) b_kept[k] = rhs[kept[k]];
}

void EliminatedSystem::recover(const double* x_kept, const double* rhs, double* x) const {
  back_substitute(*this, x_kept, [rhs](const Step& s) { return rhs[s.v]; }, x);
}

}  // namespace pgsim
