#include "pcg/ldl_solve.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <queue>

#include "pcg/triangular.hpp"

namespace pgsim {
namespace {

// sum of val[k] y[col[k]] over k in [begin, end), in four independent sums: a row's terms
// (about ten) would otherwise wait on each other's additions.
inline double dot(const double* val, const int32_t* col, int32_t begin, int32_t end, const double* y) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int32_t k = begin;
  for (; k + 4 <= end; k += 4) {
    s0 += val[k] * y[col[k]];
    s1 += val[k + 1] * y[col[k + 1]];
    s2 += val[k + 2] * y[col[k + 2]];
    s3 += val[k + 3] * y[col[k + 3]];
  }
  for (; k < end; ++k) s0 += val[k] * y[col[k]];
  return (s0 + s1) + (s2 + s3);
}

// The cut of the elimination tree (parent: -1 at roots; columns in postorder, so the subtree of
// j is [first[j], j]; work[j]: the entries of column j) for up to `threads` threads: cuts the
// heaviest subtree (its root goes to the top, its children become subtrees) while that shortens
// the longest path, top plus the heaviest thread's share (subtrees dealt heaviest first, each
// to the least loaded thread), and returns the best cut seen.
struct Cut {
  std::vector<std::vector<int32_t>> roots;  // per thread
  std::vector<int32_t> top;
};

Cut cut_tree(const std::vector<int32_t>& parent, const std::vector<int64_t>& subtree, const std::vector<int64_t>& work,
             int threads) {
  const auto n = int32_t(parent.size());
  std::vector<std::vector<int32_t>> children(static_cast<size_t>(n));
  std::vector<int32_t> roots;
  for (int32_t j = 0; j < n; ++j) (parent[size_t(j)] < 0 ? roots : children[size_t(parent[size_t(j)])]).push_back(j);
  auto lighter = [&](int32_t a, int32_t b) { return subtree[size_t(a)] < subtree[size_t(b)]; };
  std::priority_queue<int32_t, std::vector<int32_t>, decltype(lighter)> open(lighter, roots);
  int64_t top_work = 0;
  auto cut_heaviest = [&] {  // its root to the top, its children open; returns the root
    const int32_t j = open.top();
    open.pop();
    top_work += work[size_t(j)];
    for (int32_t c : children[size_t(j)]) open.push(c);
    return j;
  };
  auto deal = [&](Cut* out) {  // the longest path of the cut now; fills out when given
    std::vector<int32_t> all;
    for (auto q = open; !q.empty(); q.pop()) all.push_back(q.top());  // heaviest first
    std::vector<int64_t> load(size_t(threads), 0);
    if (out) out->roots.assign(size_t(threads), {});
    for (int32_t r : all) {
      const size_t t = size_t(std::min_element(load.begin(), load.end()) - load.begin());
      load[t] += subtree[size_t(r)];
      if (out) out->roots[t].push_back(r);
    }
    return top_work + *std::max_element(load.begin(), load.end());
  };
  int64_t best = deal(nullptr);
  size_t best_cuts = 0;
  // Every cut moves one node to the top; beyond 64 per thread the top's serial work dominates.
  for (size_t cuts = 1; threads > 1 && !open.empty() && cuts <= size_t(64 * threads); ++cuts) {
    cut_heaviest();
    const int64_t path = deal(nullptr);
    if (path < best) best = path, best_cuts = cuts;
  }
  // Replay the best prefix of cuts.
  while (!open.empty()) open.pop();
  for (int32_t r : roots) open.push(r);
  top_work = 0;
  Cut cut;
  for (size_t k = 0; k < best_cuts; ++k) cut.top.push_back(cut_heaviest());
  deal(&cut);
  std::sort(cut.top.begin(), cut.top.end());
  return cut;
}

}  // namespace

LdlSolve::LdlSolve(int32_t n, const int32_t* perm, const int32_t* col_ptr, const int32_t* row, const double* val,
                   int threads)
    : perm_(perm, perm + n), inverse_d_(std::size_t(n)), y_(std::size_t(n)) {
  upper_.rows = n;
  upper_.ptr.assign(std::size_t(n) + 1, 0);
  const std::size_t strict = std::size_t(col_ptr[n] - col_ptr[0]) - std::size_t(n);
  upper_.col.reserve(strict), upper_.val.reserve(strict);
  for (int32_t j = 0; j < n; ++j) {
    inverse_d_[std::size_t(j)] = 1.0 / val[col_ptr[j]];
    upper_.col.insert(upper_.col.end(), row + col_ptr[j] + 1, row + col_ptr[j + 1]);
    upper_.val.insert(upper_.val.end(), val + col_ptr[j] + 1, val + col_ptr[j + 1]);
    upper_.ptr[std::size_t(j) + 1] = int32_t(upper_.col.size());
  }
  lower_ = transpose(upper_);

  // The elimination tree, and whether every subtree is a range [first, root].
  std::vector<int32_t> parent(static_cast<std::size_t>(n), -1), first(static_cast<std::size_t>(n));
  std::vector<int64_t> work(static_cast<std::size_t>(n)), subtree(static_cast<std::size_t>(n));
  for (int32_t j = 0; j < n; ++j) first[std::size_t(j)] = j;
  for (int32_t j = 0; j < n; ++j) {
    const std::size_t u = std::size_t(j);
    work[u] = 2 * int64_t(upper_.ptr[u + 1] - upper_.ptr[u]) + 1;  // read forward and backward
    subtree[u] += work[u];
    if (upper_.ptr[u + 1] > upper_.ptr[u]) {
      const int32_t p = upper_.col[std::size_t(upper_.ptr[u])];  // columns sorted: the first is the parent
      parent[u] = p;
      subtree[std::size_t(p)] += subtree[u];
      first[std::size_t(p)] = std::min(first[std::size_t(p)], first[u]);
    }
  }
  // Postorder: each subtree [first[j], j] holds exactly its own nodes, i.e. as many as its size.
  std::vector<int32_t> size(std::size_t(n), 1);
  for (int32_t j = 0; j < n; ++j)
    if (parent[std::size_t(j)] >= 0) size[std::size_t(parent[std::size_t(j)])] += size[std::size_t(j)];
  bool postorder = true;
  for (int32_t j = 0; j < n && postorder; ++j) postorder = j - first[std::size_t(j)] + 1 == size[std::size_t(j)];
  const int64_t entries = int64_t(strict) + n;
  threads = int(std::clamp<int64_t>(std::min<int64_t>(threads, entries / kEntriesPerThread), 1, 64));
  if (!postorder || threads < kMinThreads) threads = 1;
  const Cut cut = cut_tree(parent, subtree, work, int(threads));
  top_ = cut.top;
  for (const std::vector<int32_t>& roots : cut.roots) {
    std::vector<Range> ranges;
    for (int32_t r : roots) ranges.push_back({first[std::size_t(r)], r});
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& c) { return a.first < c.first; });
    if (!ranges.empty()) parts_.push_back(std::move(ranges));
  }
}

inline void LdlSolve::forward(int32_t i) {
  y_[std::size_t(i)] = b_[perm_[std::size_t(i)]] - dot(lower_.val.data(), lower_.col.data(), lower_.ptr[std::size_t(i)],
                                                      lower_.ptr[std::size_t(i) + 1], y_.data());
}

inline void LdlSolve::backward(int32_t j, double* x) {
  const std::size_t u = std::size_t(j);
  const double z = y_[u] * inverse_d_[u] - dot(upper_.val.data(), upper_.col.data(), upper_.ptr[u], upper_.ptr[u + 1], y_.data());
  y_[u] = z;
  x[perm_[u]] = z;
}

void LdlSolve::solve(const double* b, double* x) {
  b_ = b;
  const int parts = int(parts_.size());
#pragma omp parallel num_threads(parts) if (parts > 1)
  {
    const int team = omp_get_num_threads();
    for (int p = omp_get_thread_num(); p < parts; p += team)
      for (const Range& r : parts_[std::size_t(p)])
        for (int32_t i = r.first; i <= r.last; ++i) forward(i);
#pragma omp barrier
#pragma omp single
    {
      for (int32_t i : top_) forward(i);
      for (auto it = top_.rbegin(); it != top_.rend(); ++it) backward(*it, x);
    }
    for (int p = omp_get_thread_num(); p < parts; p += team)
      for (auto r = parts_[std::size_t(p)].rbegin(); r != parts_[std::size_t(p)].rend(); ++r)
        for (int32_t j = r->last; j >= r->first; --j) backward(j, x);
  }
}

}  // namespace pgsim
