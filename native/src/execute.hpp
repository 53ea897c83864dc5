// Run one scenario through MLX and check it against the float64 references:
// the native twin of harness/execute.py, producing the same record fields.
#pragma once

#include "checks.hpp"
#include "expect.hpp"

namespace vjpcheck {

struct Tolerances {
  json reference, fd;  // dtype -> [atol, rtol], as exported by the harness
  Tolerance get(const std::string& dtype, bool fd_kind) const;
};

json run_scenario(const json& s, const std::string& device, const Tolerances& tol);

}  // namespace vjpcheck
