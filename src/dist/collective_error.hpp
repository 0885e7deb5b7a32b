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

// The lowest rank of `comm` where `flag` holds, or the job's size when none.
int lowest_rank_where(bool flag, MPI_Comm comm);

// Throws on every rank the exception that rank `root` passes in `error` (the others pass
// anything; collective).
[[noreturn]] void throw_everywhere(MPI_Comm comm, int root, std::exception_ptr error);

}  // namespace pgsim::dist
