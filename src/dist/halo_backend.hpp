#pragma once
// The distributed PCG back end on the CPU (pcg/pcg.hpp): one rank's part of G x through its
// RankBlock (partition.hpp), the halo exchanged with MPI nonblocking point-to-point messages
// while the interior product runs; inner products summed over ranks by MPI_Allreduce.
#include <mpi.h>

#include <vector>

#include "dist/partition.hpp"
#include "pcg/pcg.hpp"

namespace pgsim::dist {

class HaloBackend : public PcgBackend {
 public:
  // `block` must outlive the back end; every rank of `comm` builds one from its own block.
  HaloBackend(const RankBlock& block, MPI_Comm comm);

  size_t size() const override { return static_cast<size_t>(block_.rows()); }
  // y = G x on this rank's rows: 2 messages per neighbour (one each way), interior overlapped.
  void multiply(const double* x, double* y) const override;
  // The local dot product, then one MPI_Allreduce of one double.
  double dot(const std::vector<double>& a, const std::vector<double>& b) const override;

  // Seconds spent waiting for halo messages and all-reduces, over all calls so far.
  double communication_seconds() const { return comm_seconds_; }

 private:
  const RankBlock& block_;
  MPI_Comm comm_;
  mutable std::vector<double> halo_;                  // the halo values of the current x
  mutable std::vector<std::vector<double>> outbox_;   // per neighbour, the values it is sent
  mutable std::vector<MPI_Request> requests_;
  mutable double comm_seconds_ = 0;
};

}  // namespace pgsim::dist
