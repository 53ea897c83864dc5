// Run one scenario through MLX and check it against the float64 references:
// the native twin of harness/execute.py, producing the same record fields.
#pragma once

#include <functional>

#include "checks.hpp"
#include "expect.hpp"

namespace vjpcheck {

struct Tolerances {
  json reference, fd;  // dtype -> [atol, rtol], as exported by the harness
  Tolerance get(const std::string& dtype, bool fd_kind) const;
};

json run_scenario(const json& s, const std::string& device, const Tolerances& tol);

// Server mode (one fuzz case): {"skip": {scenario, reason}} when the suite cannot run it,
// {"invalid": reason} when MLX rejects the forward call (not a gradient defect), else
// {"record": ..., "vjp_error": null | {type, message}} with the reference checks only
// (forward, every gradient, and for float32 exact zeros where the reference is zero).
// `stage(name, checks_so_far)` is called before each MLX stage, so that a parent can
// tell a crash in the forward from one in the VJP.
using StageFn = std::function<void(const std::string&, const json&)>;
json serve_scenario(const json& s, const Tolerances& tol, const StageFn& stage);

std::string skip_reason(const std::string& op);

}  // namespace vjpcheck
