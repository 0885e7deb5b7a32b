#pragma once
// One rank's failure in collective work made every rank's, so that no rank is left waiting in a
// collective call that a failed rank will never make.
//
// The pattern: each rank runs its local step through agree_on_failure(); when it returns, no
// rank failed; otherwise every rank throws the same exception, that of the lowest failing rank
// (the first in file order where ranks hold consecutive parts of a file). "The same" means the
// same class and the same what() on every rank, the failing rank included: ParseError (its file,
// line and message), InputError, SystemError, std::bad_alloc; any other exception becomes a
// std::runtime_error with its what(). Messages travel by MPI_Bcast of their bytes.
#include <mpi.h>

#include <exception>
#include <functional>

namespace pgsim::dist {

// Runs `step` on this rank (catching what it throws), then agrees with every rank of `comm`.
void agree_on_failure(MPI_Comm comm, const std::function<void()>& step);

// A rank's own steps between the collective calls of longer work (a stamp's exchange inside code
// that is not this library's, say), made every rank's at agreements that every rank reaches in
// the same order: run() runs a step unless an earlier one failed on this rank, and keeps its
// failure; agree() (collective) throws on every rank, as agree_on_failure() does, where any rank
// has kept one. A failure can so wait for the next agreement, which the other ranks reach
// before any collective call that the failed rank would skip: put one before each. An agreement
// that throws inside a step (one made within a step's own collective work) passes through run()
// and every later agree() at once: every rank has it already.
class FailureAgreement {
 public:
  explicit FailureAgreement(MPI_Comm comm) : comm_(comm) {}
  void run(const std::function<void()>& step);
  void agree();

 private:
  MPI_Comm comm_;
  std::exception_ptr failed_;  // this rank's own failure, kept for the next agreement
  std::exception_ptr agreed_;  // what an agreement threw on every rank
};

// The lowest rank of `comm` where `flag` holds, or the job's size when none.
int lowest_rank_where(bool flag, MPI_Comm comm);

// Throws on every rank the exception that rank `root` passes in `error` (the others pass
// anything; collective).
[[noreturn]] void throw_everywhere(MPI_Comm comm, int root, std::exception_ptr error);

}  // namespace pgsim::dist
