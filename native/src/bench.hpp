// A MoE-shaped timing of the right-sorted gather_mm fast path (bench/moe.py).
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

namespace vjpcheck {

// args: TOKENS HIDDEN FFN EXPERTS REPEATS. Emits one line
// {"bench": "moe", "shape": {...}, "seconds": [per repeat]}; returns the exit code.
int bench_moe(char** args, const std::function<void(const nlohmann::json&)>& emit);

}  // namespace vjpcheck
