// Named speed workloads: one realistic, non-defective call of an op and its gradient
// (VJP, or JVP / vmap where the patch changes that rule), timed on the gate's pristine
// and patched binaries (bench/speed.py; which patch each one serves: bench/speed.json).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vjpcheck {

// The registered workload names, in registry order.
std::vector<std::string> workload_names();

// args: NAME REPEATS. Emits one line {"bench": NAME, "what": text, "seconds": [wall, per
// repeat], "cpu_seconds": [process CPU time, per repeat], "graph": {primitive: count}} (the primitives of one iteration's unevaluated graph, so
// two builds can be compared op for op); returns the exit code (2: unknown name, bad count).
int bench_workload(char** args, const std::function<void(const nlohmann::json&)>& emit);

}  // namespace vjpcheck
