#include "dist/halo_backend.hpp"

#include "pcg/vector_ops.hpp"

namespace pgsim::dist {

namespace {
constexpr int kHaloTag = 17;
}

HaloBackend::HaloBackend(const RankBlock& block, MPI_Comm comm)
    : block_(block), comm_(comm), halo_(static_cast<size_t>(block.halo())), requests_(2 * block.neighbors.size()) {
  for (const Neighbor& nb : block_.neighbors) outbox_.emplace_back(nb.send.size());
}

void HaloBackend::multiply(const double* x, double* y) const {
  const auto& nbs = block_.neighbors;
  for (size_t k = 0; k < nbs.size(); ++k)
    MPI_Irecv(halo_.data() + nbs[k].recv_first, nbs[k].recv_count, MPI_DOUBLE, nbs[k].rank, kHaloTag, comm_,
              &requests_[k]);
  for (size_t k = 0; k < nbs.size(); ++k) {
    std::vector<double>& out = outbox_[k];
    for (size_t s = 0; s < out.size(); ++s) out[s] = x[nbs[k].send[s]];
    MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_DOUBLE, nbs[k].rank, kHaloTag, comm_,
              &requests_[nbs.size() + k]);
  }
  block_.interior.multiply(x, y);
  const double t0 = MPI_Wtime();
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  comm_seconds_ += MPI_Wtime() - t0;
  const CsrMatrix& B = block_.boundary;
#pragma omp parallel for schedule(static, 1024)
  for (int32_t k = 0; k < B.rows; ++k) {
    double s = 0;
    for (int32_t e = B.ptr[k]; e < B.ptr[k + 1]; ++e) s += B.val[e] * halo_[B.col[e]];
    y[block_.boundary_rows[k]] += s;
  }
}

double HaloBackend::dot(const std::vector<double>& a, const std::vector<double>& b) const {
  const double local = pgsim::dot(a, b);
  double global = 0;
  const double t0 = MPI_Wtime();
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, comm_);
  comm_seconds_ += MPI_Wtime() - t0;
  return global;
}

}  // namespace pgsim::dist
