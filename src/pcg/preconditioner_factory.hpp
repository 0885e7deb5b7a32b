#pragma once
#include <memory>
#include <string>
#include <vector>

#include "cmg/builder.hpp"
#include "mna/csr.hpp"
#include "pcg/preconditioner.hpp"

namespace pgsim {

// Names accepted by make_cpu_preconditioner, the default first.
std::vector<std::string> cpu_preconditioner_names();
// Builds the named preconditioner for A (cmg with `cmg` options); throws InputError for an unknown name.
std::unique_ptr<Preconditioner> make_cpu_preconditioner(const std::string& name, const CsrMatrix& A,
                                                        const CmgOptions& cmg = {});

}  // namespace pgsim
