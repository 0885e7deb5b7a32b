#include "mna/chain_elimination.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "mna/per_thread.hpp"
#include "mna/prefix_sum.hpp"
#include "mna/touched_vector.hpp"
#include "parser/default_init.hpp"

namespace pgsim {
namespace {

// A degree-2 elimination rewrites one slot in each neighbour's row after searching it: rows longer
// than this (hubs, pads) are not searched, so the whole pass stays linear.
constexpr int32_t kMaxSearchedRow = 64;

// Level 0's ranges: at most kBaseRanges (enough for 16 threads to balance) of at least
// kMinRangeUnknowns each (a range's chains mostly end inside it). Constants and G.rows fix them,
// so the steps do not depend on the thread count.
constexpr int64_t kBaseRanges = 256;
constexpr int64_t kMinRangeUnknowns = 4096;

// Below this many steps (or kept unknowns) one thread replays them faster than a parallel region
// starts: a transient recovers every step (ibmpg1t's 15,377 kept unknowns on 2 threads took
// 0.3-4 ms per step on the loaded 2-core development VM, one thread 0.03 ms).
constexpr int64_t kParallelReplay = 262144;

// The system being eliminated, in place: G's rows with the diagonal replaced by the excess
// e_v = G_vv - sum_j |G_vj| (kept apart so long chains do not cancel digits), conductances
// w = |G_vj| > 0 in the off-diagonal slots, and slots of removed edges or unknowns skipped.
// Its arrays are FillVectors: resize() leaves them unwritten, and the first parallel loop writes
// every element (std::vector's resize would first zero them on one thread, a serial pass over
// hundreds of MB at millions of unknowns).
struct WorkGraph {
  const int32_t* ptr;
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

using Steps = FillVector<EliminatedSystem::Step>;

// One range's work at one level: its steps, steps[thread][first, last) (each thread appends the
// steps of the ranges it takes to its own array), and the unknowns it left to the next level.
struct RangeResult {
  int thread = 0;
  int64_t first = 0, last = 0;
  std::vector<int32_t> deferred;  // ascending
};

// The elimination inside unknowns [lo, hi) while other threads do the same in other ranges.
// Only unknowns whose live neighbours all lie in the range are eliminated, and a step writes only
// v's, a's and b's rows and entries, all in the range. An edge to another range stays live for
// the whole level (neither end can go), and its far end was never eliminated (ranges nest, so an
// unknown eliminated at an earlier level had all its neighbours in this range): such a column is
// recognised by its index alone, and no thread reads what another writes.
class RangeWalk {
 public:
  RangeWalk(WorkGraph& g, const uint8_t* pinned, int32_t lo, int32_t hi, Steps& steps, std::vector<int32_t>& deferred)
      : g_(g), pinned_(pinned), lo_(lo), hi_(hi), steps_(steps), deferred_(deferred) {}

  // Depth first from start: a neighbour whose degree drops is eliminated next, while its row is
  // still in cache.
  void from(int32_t start) {
    if (g_.degree[start] > 2) return;
    stack_.push_back(start);
    while (!stack_.empty()) {
      const int32_t v = stack_.back();
      stack_.pop_back();
      eliminate(v);
    }
  }

 private:
  void lower_degree(int32_t v) {
    if (--g_.degree[v] <= 2) stack_.push_back(v);
  }

  void eliminate(int32_t v) {
    if (!g_.alive[v] || g_.degree[v] > 2 || (pinned_ != nullptr && pinned_[v])) return;
    int32_t slot[2] = {-1, -1};
    int found = 0;
    for (int32_t k = g_.ptr[v]; k < g_.ptr[v + 1]; ++k) {
      const int32_t u = g_.col[k];
      if (u < 0) continue;
      if (u < lo_ || u >= hi_) {  // a neighbour in another range: left to a later level
        deferred_.push_back(v);
        return;
      }
      if (g_.alive[u]) slot[found++] = k;  // as many as degree[v] <= 2
    }
    EliminatedSystem::Step s{v, -1, -1, 0, 0, g_.excess[v], g_.rhs[v]};
    for (int i = 0; i < found; ++i) s.diag += g_.w[slot[i]];
    if (!(s.diag > 0)) return;  // an isolated unknown without a tie to a source: left to the solver
    if (found == 2 && (g_.ptr[g_.col[slot[0]] + 1] - g_.ptr[g_.col[slot[0]]] > kMaxSearchedRow ||
                       g_.ptr[g_.col[slot[1]] + 1] - g_.ptr[g_.col[slot[1]]] > kMaxSearchedRow))
      return;
    if (found >= 1) {
      s.a = g_.col[slot[0]];
      s.w_a = g_.w[slot[0]];
    }
    if (found == 2) {
      s.b = g_.col[slot[1]];
      s.w_b = g_.w[slot[1]];
    }
    g_.alive[v] = 0;
    steps_.push_back(s);
    // Schur complement of v: each neighbour u gains w_u e_v / d in excess and w_u rhs_v / d in
    // its right-hand side; two neighbours gain the edge w_a w_b / d between them.
    for (int i = 0; i < found; ++i) {
      const int32_t u = i == 0 ? s.a : s.b;
      const double w = i == 0 ? s.w_a : s.w_b;
      g_.excess[u] += w * g_.excess[v] / s.diag;
      g_.rhs[u] += w * s.rhs / s.diag;
    }
    if (found == 1) {
      lower_degree(s.a);
    } else if (found == 2) {
      const double w_ab = s.w_a * s.w_b / s.diag;
      const int32_t a_to_v = g_.find(s.a, v), b_to_v = g_.find(s.b, v);
      const int32_t a_to_b = g_.find(s.a, s.b);
      if (a_to_b >= 0) {  // a and b already adjacent (b is live): the edge gets heavier
        const int32_t b_to_a = g_.find(s.b, s.a);
        g_.w[a_to_b] += w_ab;
        g_.w[b_to_a] += w_ab;
        g_.col[a_to_v] = -1;
        g_.col[b_to_v] = -1;
        lower_degree(s.a);
        lower_degree(s.b);
      } else {  // v's slots in a's and b's rows become the new edge
        g_.col[a_to_v] = s.b;
        g_.w[a_to_v] = w_ab;
        g_.col[b_to_v] = s.a;
        g_.w[b_to_v] = w_ab;
      }
    }
  }

  WorkGraph& g_;
  const uint8_t* pinned_;
  const int32_t lo_, hi_;
  Steps& steps_;
  std::vector<int32_t>& deferred_;
  std::vector<int32_t> stack_;
};

// Every level's ranges eliminated, level after level (see EliminatedSystem's schedule), then
// their steps gathered into e.steps in level and range order, with the group and level offsets.
void eliminate_levels(WorkGraph& g, const uint8_t* pinned, int32_t n, EliminatedSystem& e) {
  const int64_t base = std::max(kMinRangeUnknowns, (int64_t(n) + kBaseRanges - 1) / kBaseRanges);
  // Per thread, one block of room for twice its share of the steps (address space only until
  // written; one block, so that pgsim's huge pages back it, where a block per range would fault in
  // 4 KB pages). A thread that takes more ranges than that grows its block, correctly: ranges
  // keep offsets, not pointers. Room for every step on every thread would reserve threads x n
  // steps of address space, which a host that limits address space (ulimit -v) or commits
  // strictly may refuse for a large grid.
  const size_t threads = static_cast<size_t>(omp_get_max_threads());
  const size_t share = threads == 1 ? size_t(n) : 2 * (size_t(n) / threads + 1);
  PerThread<Steps> steps(threads);  // each grown step by step by its thread (mna/per_thread.hpp)
  std::vector<std::vector<RangeResult>> levels;
  for (int64_t span = base;; span *= 2) {
    const int64_t ranges = std::max<int64_t>(1, (int64_t(n) + span - 1) / span);
    std::vector<RangeResult> level(static_cast<size_t>(ranges));
    const std::vector<RangeResult>* below = levels.empty() ? nullptr : &levels.back();
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t r = 0; r < ranges; ++r) {
      const auto lo = static_cast<int32_t>(r * span), hi = static_cast<int32_t>(std::min<int64_t>(n, (r + 1) * span));
      RangeResult& out = level[size_t(r)];
      out.thread = omp_get_thread_num();
      Steps& mine = steps[size_t(out.thread)].value;
      if (mine.capacity() < share) mine.reserve(share);
      out.first = int64_t(mine.size());
      RangeWalk walk(g, pinned, lo, hi, mine, out.deferred);
      if (below == nullptr) {
        for (int32_t v = lo; v < hi; ++v) walk.from(v);
      } else {
        // The two halves' leftovers, in index order (the halves' lists are ascending, and so is
        // this range's then). An unknown deferred twice is tried once.
        for (size_t half = 2 * size_t(r); half < std::min(below->size(), 2 * size_t(r) + 2); ++half)
          for (int32_t v : (*below)[half].deferred) walk.from(v);
      }
      out.last = int64_t(mine.size());
      std::sort(out.deferred.begin(), out.deferred.end());
      out.deferred.erase(std::unique(out.deferred.begin(), out.deferred.end()), out.deferred.end());
    }
    levels.push_back(std::move(level));
    if (ranges == 1) break;
  }

  e.group_ptr.assign(1, 0);
  e.level_ptr.assign(1, 0);
  std::vector<const RangeResult*> groups;
  bool in_order = true;  // every group in one thread's array, already where e.steps wants it
  for (const auto& level : levels) {
    for (const RangeResult& r : level) {
      in_order &= r.thread == levels[0][0].thread && r.first == e.group_ptr.back();
      e.group_ptr.push_back(e.group_ptr.back() + r.last - r.first);
      groups.push_back(&r);
    }
    e.level_ptr.push_back(static_cast<int32_t>(e.group_ptr.size() - 1));
  }
  if (in_order) {  // one thread took every range (--threads 1): nothing to gather
    e.steps = std::move(steps[size_t(levels[0][0].thread)].value);
    return;
  }
  e.steps.resize(size_t(e.group_ptr.back()));
  const auto n_groups = static_cast<int64_t>(groups.size());
#pragma omp parallel for schedule(dynamic, 1) if (e.group_ptr.back() > kParallelReplay)
  for (int64_t grp = 0; grp < n_groups; ++grp) {
    const RangeResult& r = *groups[size_t(grp)];
    const EliminatedSystem::Step* from = steps[size_t(r.thread)].value.data();
    std::copy(from + r.first, from + r.last, e.steps.begin() + e.group_ptr[size_t(grp)]);
  }
}

// The elimination of G (n rows; g.ptr its offsets, g.col and g.w sized to its entries), whose
// columns and values col and val may be g.col's and g.w's own storage: each entry is read before
// its slot is written.
EliminatedSystem eliminate(WorkGraph& g, int32_t n, const int32_t* col, const double* val,
                           const std::vector<double>& b, const uint8_t* pinned) {
  const size_t un = static_cast<size_t>(n);
  const int32_t* ptr = g.ptr;
  g.excess.resize(un);
  g.rhs.resize(un);
  g.degree.resize(un);
  g.alive.resize(un);
#pragma omp parallel for schedule(static, 4096)
  for (int32_t v = 0; v < n; ++v) {
    g.rhs[v] = b[v];
    double diag = 0, off = 0;
    int32_t degree = 0;
    for (int32_t k = ptr[v]; k < ptr[v + 1]; ++k) {
      const int32_t c = col[k];
      const double x = val[k];
      if (c == v || x == 0) {
        if (c == v) diag = x;
        g.col[k] = -1;
        g.w[k] = 0;
        continue;
      }
      g.col[k] = c;
      g.w[k] = std::fabs(x);
      off += g.w[k];
      ++degree;
    }
    g.excess[v] = diag - off;
    g.degree[v] = degree;
    g.alive[v] = 1;
  }

  EliminatedSystem out;
  out.original_unknowns = n;
  eliminate_levels(g, pinned, n, out);

  // The kept system, in the original order: kept unknown v gets the number of kept unknowns before it.
  FillVector<int32_t> new_index;
  size_for_overwrite(new_index, un);
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
  size_for_overwrite(S.ptr, static_cast<size_t>(m) + 1);  // row lengths, then their offsets
  S.ptr[0] = 0;
  assign_touched(out.b, static_cast<size_t>(m));
#pragma omp parallel for schedule(static, 4096)
  for (int32_t r = 0; r < m; ++r) {
    const int32_t v = out.kept[r];
    S.ptr[r + 1] = g.degree[v] + 1;
    out.b[r] = g.rhs[v];
  }
  prefix_sum(S.ptr);
  // Degrees and right-hand sides are read no more: freed before S's largest arrays are made (the
  // end of the elimination is its peak of host memory).
  FillVector<int32_t>().swap(g.degree);
  FillVector<double>().swap(g.rhs);
  // Every entry written below: a kept row's live slots number its degree, and its diagonal follows.
  size_for_overwrite(S.col, static_cast<size_t>(S.ptr[m]));
  size_for_overwrite(S.val, S.col.size());
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
    // Rewritten slots broke the column order.
    sort_row(S.col.data() + S.ptr[r], S.val.data() + S.ptr[r], at - S.ptr[r]);
  }
  return out;
}

}  // namespace

EliminatedSystem eliminate_chains(const CsrMatrix& G, const std::vector<double>& b,
                                  const std::vector<uint8_t>* pinned) {
  WorkGraph g{G.ptr.data(), {}, {}, {}, {}, {}, {}};
  g.col.resize(G.col.size());
  g.w.resize(G.val.size());
  return eliminate(g, G.rows, G.col.data(), G.val.data(), b, pinned != nullptr ? pinned->data() : nullptr);
}

EliminatedSystem eliminate_chains(CsrMatrix&& G, const std::vector<double>& b, const std::vector<uint8_t>* pinned) {
  CsrMatrix own = std::move(G);  // its offsets read to the end; its entries become g's
  G = CsrMatrix();
  WorkGraph g{own.ptr.data(), std::move(own.col), std::move(own.val), {}, {}, {}, {}};
  return eliminate(g, own.rows, g.col.data(), g.w.data(), b, pinned != nullptr ? pinned->data() : nullptr);
}

std::vector<double> EliminatedSystem::recover(const std::vector<double>& x_kept) const {
  std::vector<double> x;
  recover(x_kept, x);
  return x;
}

namespace {

// replay(e, forward, step): step(s) for every step, in elimination order (forward) or its reverse,
// a level's groups in parallel when there are many steps. The groups of a level touch disjoint
// unknowns, and each unknown sees its steps in one order, so the results are the same bit for bit
// for any thread count.
template <class StepFn>
void replay(const EliminatedSystem& e, bool forward, StepFn step) {
  const auto levels = static_cast<int32_t>(e.level_ptr.size()) - 1;
  const bool parallel = e.group_ptr.back() > kParallelReplay;
  for (int32_t i = 0; i < levels; ++i) {
    const int32_t l = forward ? i : levels - 1 - i;
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
    for (int32_t grp = e.level_ptr[size_t(l)]; grp < e.level_ptr[size_t(l) + 1]; ++grp) {
      const int64_t first = e.group_ptr[size_t(grp)], last = e.group_ptr[size_t(grp) + 1];
      if (forward) {
        for (int64_t k = first; k < last; ++k) step(e.steps[size_t(k)]);
      } else {
        for (int64_t k = last; k-- > first;) step(e.steps[size_t(k)]);
      }
    }
  }
}

// Kept and eliminated unknowns partition the original ones: every x[i] is written once.
// rhs_of(s): the right-hand side step s saw.
template <class RhsOf>
void back_substitute(const EliminatedSystem& e, const double* x_kept, RhsOf rhs_of, double* x) {
  const auto n_kept = static_cast<int64_t>(e.kept.size());
  // A copy, a few us per 10^5 unknowns: threads only where that outweighs their fork.
#pragma omp parallel for schedule(static, 4096) if (n_kept > kParallelReplay)
  for (int64_t k = 0; k < n_kept; ++k) x[size_t(e.kept[size_t(k)])] = x_kept[size_t(k)];
  // Reverse elimination order: a and b are known by then.
  replay(e, false, [&](const EliminatedSystem::Step& s) {
    double t = rhs_of(s);
    if (s.a >= 0) t += s.w_a * x[s.a];
    if (s.b >= 0) t += s.w_b * x[s.b];
    x[s.v] = t / s.diag;
  });
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
  replay(*this, true, [rhs](const Step& s) {
    if (s.a >= 0) rhs[s.a] += s.w_a * rhs[s.v] / s.diag;
    if (s.b >= 0) rhs[s.b] += s.w_b * rhs[s.v] / s.diag;
  });
  for (size_t k = 0; k < kept.size(); ++k) b_kept[k] = rhs[kept[k]];
}

void EliminatedSystem::recover(const double* x_kept, const double* rhs, double* x) const {
  back_substitute(*this, x_kept, [rhs](const Step& s) { return rhs[s.v]; }, x);
}

}  // namespace pgsim
