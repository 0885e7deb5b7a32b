#include "pcg/direct.hpp"

#include <Eigen/Sparse>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#ifdef PGSIM_HAVE_CHOLMOD
#include "pcg/cholmod_library.hpp"
#endif

#include "pcg/ldl_solve.hpp"
#include "pcg/pcg_cpu.hpp"

namespace pgsim {

std::string direct_solver_name() {
#ifdef PGSIM_HAVE_CHOLMOD
  return "cholmod";
#else
  return "eigen-ldlt";
#endif
}

#ifdef PGSIM_HAVE_CHOLMOD
// CHOLMOD through its own interface rather than Eigen's wrapper. A simplicial factor (the small
// systems a transient solves a thousand times) is copied into an LdlSolve (pcg/ldl_solve.hpp:
// as fast as cholmod_solve2 on one thread, 0.62 against 0.64 ms on ibmpg1t's step system on the
// H100 machine, and it splits among threads: 0.16 ms on 10) and freed; a supernodal one (large
// DC systems, solved once) is solved by cholmod_solve2, which keeps its result and workspace
// between solves.
struct DirectFactor::Impl {
  cholmod_common common;
  cholmod_factor* factor = nullptr;  // kept for cholmod_solve2 (supernodal, or when asked for)
  cholmod_dense *x = nullptr, *y = nullptr, *e = nullptr;  // cholmod_solve2's result and workspace
  std::optional<LdlSolve> simplicial;

  Impl() { cholmod().start(&common); }
  ~Impl() {
    cholmod().free_dense(&x, &common);
    cholmod().free_dense(&y, &common);
    cholmod().free_dense(&e, &common);
    cholmod().free_factor(&factor, &common);
    cholmod().finish(&common);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
};

namespace {
// A is symmetric with both triangles stored: its CSR arrays read as CSC are the same matrix, of
// which CHOLMOD reads the lower triangle (stype -1). The view does not own the arrays.
cholmod_sparse cholmod_view(const CsrMatrix& A) {
  cholmod_sparse view{};
  view.nrow = view.ncol = size_t(A.rows);
  view.nzmax = size_t(A.nnz());
  view.p = const_cast<int32_t*>(A.ptr.data());
  view.i = const_cast<int32_t*>(A.col.data());
  view.x = const_cast<double*>(A.val.data());
  view.stype = -1;
  view.itype = CHOLMOD_INT;
  view.xtype = CHOLMOD_REAL;
  view.dtype = CHOLMOD_DOUBLE;
  view.sorted = 1;
  view.packed = 1;
  return view;
}
}  // namespace

std::optional<int64_t> factor_entries(const CsrMatrix& A) {
  if (A.rows == 0) return 0;
  cholmod_common c;
  cholmod().start(&c);
  cholmod_sparse view = cholmod_view(A);
  cholmod_factor* symbolic = cholmod().analyze(&view, &c);
  const std::optional<int64_t> entries =
      symbolic && c.status == CHOLMOD_OK ? std::optional<int64_t>(int64_t(c.lnz)) : std::nullopt;
  cholmod().free_factor(&symbolic, &c);
  cholmod().finish(&c);
  return entries;
}

DirectFactor::DirectFactor(const CsrMatrix& A, int threads, bool cholmod_solve) : impl_(std::make_unique<Impl>()), n_(A.rows) {
  if (n_ == 0) return;
  cholmod_sparse view = cholmod_view(A);
  cholmod_common& c = impl_->common;
  cholmod_factor*& L = impl_->factor;
  L = cholmod().analyze(&view, &c);
  if (L) cholmod().factorize(&view, L, &c);
  if (!L || c.status != CHOLMOD_OK || L->minor < size_t(n_))
    throw std::runtime_error("direct solver: factorization failed (matrix not positive definite?)");
  if (L->is_super || cholmod_solve) return;
  // As L D L' (unit L), packed, columns in order: the layout LdlSolve reads.
  if (!cholmod().change_factor(CHOLMOD_REAL, false, false, true, true, L, &c))
    throw std::runtime_error("direct solver: CHOLMOD could not convert its factor (out of memory?)");
  impl_->simplicial.emplace(n_, static_cast<const int32_t*>(L->Perm), static_cast<const int32_t*>(L->p),
                            static_cast<const int32_t*>(L->i), static_cast<const double*>(L->x), threads);
  cholmod().free_factor(&L, &c);
}

DirectFactor::~DirectFactor() = default;

int DirectFactor::threads() const { return impl_->simplicial ? impl_->simplicial->threads() : 1; }

void DirectFactor::solve(const double* b, double* x) {
  if (n_ == 0) return;
  Impl& f = *impl_;
  if (f.simplicial) return f.simplicial->solve(b, x);
  cholmod_dense rhs{};  // a view of b
  rhs.nrow = rhs.d = rhs.nzmax = size_t(n_);
  rhs.ncol = 1;
  rhs.x = const_cast<double*>(b);
  rhs.xtype = CHOLMOD_REAL;
  rhs.dtype = CHOLMOD_DOUBLE;
  if (!cholmod().solve2(CHOLMOD_A, f.factor, &rhs, nullptr, &f.x, nullptr, &f.y, &f.e, &f.common))
    throw std::runtime_error("direct solver: CHOLMOD's solve failed (out of memory?)");
  std::copy_n(static_cast<const double*>(f.x->x), n_, x);
}
#else
std::optional<int64_t> factor_entries(const CsrMatrix&) { return std::nullopt; }

struct DirectFactor::Impl {
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double, Eigen::ColMajor, int32_t>, Eigen::Lower> solver;
};

DirectFactor::DirectFactor(const CsrMatrix& A, int, bool) : impl_(std::make_unique<Impl>()), n_(A.rows) {
  if (n_ == 0) return;
  // A is symmetric: its CSR arrays read as CSC are the same matrix.
  Eigen::Map<const Eigen::SparseMatrix<double, Eigen::ColMajor, int32_t>> G(n_, n_, A.nnz(), A.ptr.data(),
                                                                           A.col.data(), A.val.data());
  impl_->solver.compute(G);
  if (impl_->solver.info() != Eigen::Success)
    throw std::runtime_error("direct solver: factorization failed (matrix not positive definite?)");
}

DirectFactor::~DirectFactor() = default;

int DirectFactor::threads() const { return 1; }

void DirectFactor::solve(const double* b, double* x) {
  if (n_ == 0) return;
  Eigen::Map<const Eigen::VectorXd> rhs(b, n_);
  Eigen::Map<Eigen::VectorXd> sol(x, n_);
  sol = impl_->solver.solve(rhs);
}
#endif

SolveResult solve_direct(const CsrMatrix& A, const std::vector<double>& b, std::vector<double>& x) {
  SolveResult result;
  x.assign(static_cast<size_t>(A.rows), 0.0);
  if (A.rows == 0) {
    result.converged = true;
    return result;
  }
  DirectFactor(A).solve(b.data(), x.data());
  result.relative_residual = relative_residual(A, b, x);
  result.converged = std::isfinite(result.relative_residual);
  return result;
}

}  // namespace pgsim
