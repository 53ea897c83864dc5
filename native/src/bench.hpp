// A MoE-shaped timing of the right-sorted gather_mm fast path (bench/moe.py).
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

namespace vjpcheck {

// args: TOKENS HIDDEN FFN EXPERTS REPEATS. Emits one line
// {"bench": "moe", "shape": {...}, "seconds": [per repeat]}; returns the exit code.
int bench_moe(char** args, const std::function<void(const nlohmann::json&)>& emit);

// Emits {"fast_path": {"gather_mm": bool, "gather_qmm": bool}}: whether the VJP of a
// right-sorted, non-broadcast call (the MoE case) takes the segmented-matmul fast path,
// read from its graph before evaluation (build_and_test.py requires patched == pristine).
int fast_path_probe(const std::function<void(const nlohmann::json&)>& emit);

}  // namespace vjpcheck
