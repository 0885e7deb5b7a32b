#include "dist/collective_error.hpp"

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

#include "app/system_error.hpp"  // header only: the class a machine failure keeps on every rank
#include "parser/input_error.hpp"

namespace pgsim::dist {
namespace {

enum Kind : int32_t { kParse, kInput, kSystem, kMemory, kOther };

// What crosses the wire: the class, and for a ParseError its file and line apart from its message.
struct Failure {
  int32_t kind = kOther;
  uint32_t line = 0;
  std::string file, message;
};

Failure describe(std::exception_ptr error) {
  Failure f;
  try {
    std::rethrow_exception(error);
  } catch (const ParseError& e) {
    // what() is "file:line: message".
    const size_t prefix = e.file().size() + 1 + std::to_string(e.line()).size() + 2;
    f = {kParse, e.line(), e.file(), std::string(e.what()).substr(prefix)};
  } catch (const InputError& e) {
    f = {kInput, 0, {}, e.what()};
  } catch (const SystemError& e) {
    f = {kSystem, 0, {}, e.what()};
  } catch (const std::bad_alloc&) {
    f = {kMemory, 0, {}, {}};
  } catch (const std::exception& e) {
    f = {kOther, 0, {}, e.what()};
  } catch (...) {
    f = {kOther, 0, {}, "unknown exception"};
  }
  return f;
}

void broadcast(std::string& s, int root, MPI_Comm comm) {
  uint64_t size = s.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, root, comm);
  s.resize(size);
  MPI_Bcast(s.data(), static_cast<int>(size), MPI_CHAR, root, comm);  // messages are short
}

}  // namespace

int lowest_rank_where(bool flag, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int lowest = flag ? rank : size;
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, comm);
  return lowest;
}

void throw_everywhere(MPI_Comm comm, int root, std::exception_ptr error) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Failure f;
  if (rank == root) f = describe(error);
  int32_t head[2] = {f.kind, static_cast<int32_t>(f.line)};
  MPI_Bcast(head, 2, MPI_INT32_T, root, comm);
  f.kind = head[0];
  f.line = static_cast<uint32_t>(head[1]);
  broadcast(f.file, root, comm);
  broadcast(f.message, root, comm);
  switch (f.kind) {
    case kParse: throw ParseError(f.file, f.line, f.message);
    case kInput: throw InputError(f.message);
    case kSystem: throw SystemError(f.message);
    case kMemory: throw std::bad_alloc();
    default: throw std::runtime_error(f.message);
  }
}

void agree_on_failure(MPI_Comm comm, const std::function<void()>& step) {
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  const int root = lowest_rank_where(error != nullptr, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (root < size) throw_everywhere(comm, root, error);
}

void FailureAgreement::run(const std::function<void()>& step) {
  if (agreed_) std::rethrow_exception(agreed_);
  if (failed_) return;
  try {
    step();
  } catch (...) {
    if (agreed_) throw;  // an agreement inside the step: every rank has it
    failed_ = std::current_exception();
  }
}

void FailureAgreement::agree() {
  if (agreed_) std::rethrow_exception(agreed_);
  try {
    agree_on_failure(comm_, [&] {
      if (failed_) std::rethrow_exception(failed_);
    });
  } catch (...) {
    agreed_ = std::current_exception();
    throw;
  }
}

}  // namespace pgsim::dist
