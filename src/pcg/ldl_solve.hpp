#pragma once
// Solves with a sparse factorisation P A P' = L D L' (unit lower triangular L, diagonal D), as
// CHOLMOD's simplicial factor gives it: x = P' L'^-1 D^-1 L^-1 P b, on several threads.
//
// Threads: the elimination tree (the parent of column j is the row of its first entry below the
// diagonal) is cut into disjoint subtrees and a "top" (every node above a cut, closed upwards).
// L y = P b for a subtree's rows needs only that subtree's rows; the top's rows need everything
// below them; L' z = D^-1 y runs the other way. So a solve is: each thread its subtrees' rows,
// a barrier, one thread the top (forward, then backward), a barrier, each thread its subtrees'
// columns backwards. CHOLMOD numbers the tree in postorder, so every subtree is one contiguous
// range of rows. ibmpg1t's step system (15,377 unknowns, 164,688 factor entries) leaves about
// an eighth of the entries in the top with 8 threads' subtrees (4.3x less on the longest path;
// measured on the H100 machine, 0.16 ms a solve on 10 threads against 0.62 ms on one).
//
// Both triangles are read as gathers into register sums: L by rows forward, by columns backward
// (CHOLMOD's cholmod_solve2 makes a pass per factor, P, L, D, L', P', and runs L's as a scatter).
#include <cstdint>
#include <vector>

#include "mna/csr.hpp"

namespace pgsim {

class LdlSolve {
 public:
  // n unknowns; perm: P as CHOLMOD's Perm (row k of P A P' is row perm[k] of A); L in CSC
  // (col_ptr, row, val), each column's first entry its diagonal, which holds D, the rest L's
  // strictly lower entries (CHOLMOD's packed simplicial LDL' layout). Copies what it needs.
  // threads: at most this many share a solve (fewer when the tree or the factor is small: each
  // thread gets at least kEntriesPerThread entries); one below kMinThreads, or when the columns
  // are not in postorder.
  LdlSolve(int32_t n, const int32_t* perm, const int32_t* col_ptr, const int32_t* row, const double* val,
           int threads = 1);
  // x = A^-1 b; x and b may not alias.
  void solve(const double* b, double* x);
  int threads() const { return int(parts_.size()); }

  // A barrier costs a few us, as much as some ten thousand entries of a solve.
  static constexpr int64_t kEntriesPerThread = 16384;
  // Two threads gain at most 2x and need two idle cores at every solve's barriers: on the loaded
  // 2-core development VM, ibmpg1t's solve took 10.8 ms on two threads against 0.5 ms on one.
  static constexpr int kMinThreads = 4;

 private:
  struct Range {
    int32_t first, last;  // rows [first, last]
  };
  void forward(int32_t i);   // y[i] from P b and y's earlier rows
  void backward(int32_t j, double* x);  // z[j] from y[j] and z's later rows, into y[j] and x

  std::vector<int32_t> perm_;
  CsrMatrix upper_;  // L' without its diagonal: row j is L's column j (the backward solve)
  CsrMatrix lower_;  // L without its diagonal, by rows (the forward solve)
  std::vector<double> inverse_d_, y_;
  const double* b_ = nullptr;
  std::vector<std::vector<Range>> parts_;  // per thread, its subtrees
  std::vector<int32_t> top_;               // ascending
};

}  // namespace pgsim
