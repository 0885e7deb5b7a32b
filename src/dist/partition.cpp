#include "dist/partition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#ifdef PGSIM_HAVE_METIS
#include <metis.h>
#endif

namespace pgsim::dist {
namespace {

// owner[i] for every original row: METIS k-way on the off-diagonal graph, or equal contiguous ranges.
std::vector<int32_t> assign_owners(const CsrMatrix& G, int32_t parts) {
  const auto n = static_cast<size_t>(G.rows);
  std::vector<int32_t> owner(n, 0);
  if (parts == 1) return owner;
#ifdef PGSIM_HAVE_METIS
  // Edge weights: the conductance in units of the weakest one, capped, so that the cut avoids
  // strong couplings (what block Jacobi drops) and not merely many edges.
  const double weakest = weakest_coupling(G);
  std::vector<idx_t> xadj(n + 1, 0), adjncy, adjwgt;
  adjncy.reserve(static_cast<size_t>(G.nnz()));
  adjwgt.reserve(static_cast<size_t>(G.nnz()));
  for (int32_t i = 0; i < G.rows; ++i) {
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k)
      if (G.col[k] != i) {
        adjncy.push_back(G.col[k]);
        adjwgt.push_back(static_cast<idx_t>(coupling_weight(G.val[k], weakest)));
      }
    xadj[i + 1] = static_cast<idx_t>(adjncy.size());
  }
  idx_t nvtxs = G.rows, ncon = 1, nparts = parts, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // the same partition every run, on every machine
  std::vector<idx_t> part(n);
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr, adjwgt.data(),
                                         &nparts, nullptr, nullptr, options, &objval, part.data());
  if (status != METIS_OK) throw std::runtime_error("METIS_PartGraphKway failed (status " + std::to_string(status) + ")");
  for (size_t i = 0; i < n; ++i) owner[i] = static_cast<int32_t>(part[i]);
#else
  for (size_t i = 0; i < n; ++i) owner[i] = static_cast<int32_t>(int64_t(i) * parts / int64_t(n));
#endif
  return owner;
}

}  // namespace

double weakest_coupling(const CsrMatrix& rows, int64_t first) {
  double weakest = std::numeric_limits<double>::infinity();
#pragma omp parallel for schedule(static, 4096) reduction(min : weakest)
  for (int32_t i = 0; i < rows.rows; ++i)
    for (int32_t k = rows.ptr[size_t(i)]; k < rows.ptr[size_t(i) + 1]; ++k)
      if (rows.col[size_t(k)] != first + i && rows.val[size_t(k)] != 0) weakest = std::min(weakest, std::fabs(rows.val[size_t(k)]));
  return weakest;
}

Partition partition_rows(const CsrMatrix& G, int32_t parts) {
  if (parts < 1 || parts > G.rows)
    throw std::invalid_argument("cannot split " + std::to_string(G.rows) + " rows among " + std::to_string(parts) +
                                " ranks");
  Partition p;
  p.parts = parts;
  p.owner = assign_owners(G, parts);
  // A stable counting sort by owner: each rank's rows contiguous, in their original order.
  p.offset.assign(static_cast<size_t>(parts) + 1, 0);
  for (int32_t r : p.owner) ++p.offset[r + 1];
  for (int32_t r = 0; r < parts; ++r) p.offset[r + 1] += p.offset[r];
  std::vector<int32_t> next(p.offset.begin(), p.offset.end() - 1);
  p.global.resize(p.owner.size());
  p.original.resize(p.owner.size());
  for (int32_t i = 0; i < G.rows; ++i) {
    const int32_t g = next[p.owner[i]]++;
    p.global[i] = g;
    p.original[g] = i;
  }
  return p;
}

RankBlock extract_block(const CsrMatrix& G, const std::vector<double>& b, const Partition& p, int32_t rank) {
  RankBlock blk;
  blk.rank = rank;
  blk.first_row = p.offset[rank];
  blk.global_rows = G.rows;
  const int32_t n = p.rows_of(rank);
  const auto owned = [&](int32_t original_col) { return p.owner[original_col] == rank; };

  // The halo: every other rank's row that one of ours touches, ascending global index.
  for (int32_t l = 0; l < n; ++l) {
    const int32_t i = p.original[blk.first_row + l];
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k)
      if (!owned(G.col[k])) blk.halo_global.push_back(p.global[G.col[k]]);
  }
  std::sort(blk.halo_global.begin(), blk.halo_global.end());
  blk.halo_global.erase(std::unique(blk.halo_global.begin(), blk.halo_global.end()), blk.halo_global.end());
  const auto halo_index = [&](int32_t global) {
    return static_cast<int32_t>(std::lower_bound(blk.halo_global.begin(), blk.halo_global.end(), global) -
                                blk.halo_global.begin());
  };

  // Neighbours in ascending rank: receive ranges are runs of one owner in the sorted halo.
  std::vector<int32_t> neighbor_of(static_cast<size_t>(p.parts), -1);
  for (int32_t h = 0; h < blk.halo(); ++h) {
    const int32_t q = p.owner[p.original[blk.halo_global[h]]];
    if (neighbor_of[q] < 0) {
      neighbor_of[q] = static_cast<int32_t>(blk.neighbors.size());
      blk.neighbors.push_back({q, h, 0, {}});
    }
    ++blk.neighbors[neighbor_of[q]].recv_count;
  }

  // The interior and boundary rows, and what each neighbour needs of ours (symmetry of G).
  CsrMatrix& A = blk.interior;
  CsrMatrix& B = blk.boundary;
  A.rows = n;
  blk.b.resize(static_cast<size_t>(n));
  std::vector<std::pair<int32_t, double>> ghost_entries;
  for (int32_t l = 0; l < n; ++l) {
    const int32_t i = p.original[blk.first_row + l];
    blk.b[l] = b[i];
    ghost_entries.clear();
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) {
      const int32_t c = G.col[k];
      if (owned(c)) {  // original order within a rank is local order, so columns stay sorted
        A.col.push_back(p.global[c] - blk.first_row);
        A.val.push_back(G.val[k]);
      } else {
        ghost_entries.push_back({halo_index(p.global[c]), G.val[k]});
        std::vector<int32_t>& send = blk.neighbors[neighbor_of[p.owner[c]]].send;
        if (send.empty() || send.back() != l) send.push_back(l);
      }
    }
    A.ptr.push_back(static_cast<int32_t>(A.col.size()));
    if (!ghost_entries.empty()) {
      std::sort(ghost_entries.begin(), ghost_entries.end());
      blk.boundary_rows.push_back(l);
      for (const auto& [h, v] : ghost_entries) {
        B.col.push_back(h);
        B.val.push_back(v);
      }
      B.ptr.push_back(static_cast<int32_t>(B.col.size()));
    }
  }
  B.rows = static_cast<int32_t>(blk.boundary_rows.size());
  return blk;
}

}  // namespace pgsim::dist
