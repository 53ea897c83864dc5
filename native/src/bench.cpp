#include "bench.hpp"

#include <chrono>
#include <functional>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <mlx/primitives.h>

#include "mlx_ops.hpp"

namespace vjpcheck {

// Rows routed to experts in sorted order (what a MoE layer does before its expert
// matmuls): Y[t] = X[t] @ W[e_t], with e_t non-decreasing, then the VJP w.r.t. X and W.
int bench_moe(char** args, const std::function<void(const json&)>& emit) {
  int T, D, F, E, R;
  try {
    T = std::stoi(args[0]), D = std::stoi(args[1]), F = std::stoi(args[2]);
    E = std::stoi(args[3]), R = std::stoi(args[4]);
  } catch (const std::exception&) {
    T = D = F = E = R = 0;
  }
  if (T < 1 || D < 1 || F < 1 || E < 1 || R < 1) {
    std::cerr << "vjpcheck-native: --bench-moe needs five positive integers\n";
    return 2;
  }
  std::vector<uint32_t> experts(T);
  for (int t = 0; t < T; ++t) experts[t] = uint32_t((int64_t(t) * E) / T);
  auto idx = mx::array(experts.begin(), {T}, mx::uint32);
  auto x = mx::random::normal({T, 1, D}, mx::float32, 0.0f, 1.0f, mx::random::key(1));
  auto w = mx::random::normal({E, D, F}, mx::float32, 0.0f, 0.05f, mx::random::key(2));
  auto cot = mx::random::normal({T, 1, F}, mx::float32, 0.0f, 1.0f, mx::random::key(3));
  mx::eval({idx, x, w, cot});
  auto f = [&idx](const std::vector<mx::array>& a) {
    return std::vector<mx::array>{mx::gather_mm(a[0], a[1], std::nullopt, idx, true)};
  };
  std::vector<double> seconds;
  for (int r = -1; r < R; ++r) {  // one warm-up round
    auto t0 = std::chrono::steady_clock::now();
    auto [outs, grads] = mx::vjp(f, {x, w}, {cot});
    mx::eval({outs[0], grads[0], grads[1]});
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r >= 0) seconds.push_back(s);
  }
  emit({{"bench", "moe"},
        {"shape", {{"tokens", T}, {"hidden", D}, {"ffn", F}, {"experts", E}}},
        {"seconds", seconds}});
  return 0;
}

// True when the (unevaluated) graph behind `out` contains a primitive called `name`.
static bool graph_has(const mx::array& out, const std::string& name) {
  std::set<std::uintptr_t> seen;
  std::vector<mx::array> todo{out};
  while (!todo.empty()) {
    mx::array a = todo.back();
    todo.pop_back();
    if (!seen.insert(a.id()).second) continue;
    if (a.has_primitive() && name == a.primitive().name()) return true;
    for (auto& in : a.inputs()) todo.push_back(in);
  }
  return false;
}

// The right-sorted, non-broadcast calls a MoE layer makes: does the weight gradient
// go through the segmented matmul (the fast path) rather than gather + scatter?
int fast_path_probe(const std::function<void(const json&)>& emit) {
  const int T = 8, D = 64, F = 8, E = 4;
  std::vector<uint32_t> experts(T);
  for (int t = 0; t < T; ++t) experts[t] = uint32_t(t * E / T);
  auto idx = mx::array(experts.begin(), {T}, mx::uint32);
  auto x = mx::ones({T, 1, D});
  auto cot = mx::ones({T, 1, F});
  auto w = mx::ones({E, D, F});
  auto mm = [&idx](const std::vector<mx::array>& a) {
    return std::vector<mx::array>{mx::gather_mm(a[0], a[1], std::nullopt, idx, true)};
  };
  auto [y1, g1] = mx::vjp(mm, {x, w}, {cot});
  bool gmm = graph_has(g1[1], "SegmentedMM");
  // gather_qmm: codes of 1 (4 bits), groups of 32 along D, gradient w.r.t. the scales.
  auto wq = mx::full({E, F, D / 8}, 0x11111111u, mx::uint32);
  auto biases = mx::zeros({E, F, D / 32});
  auto qmm = [&](const std::vector<mx::array>& a) {
    return std::vector<mx::array>{gather_qmm_call(x, wq, a[0], biases, std::nullopt, idx, true, 32, 4,
                                                  "affine", true)};
  };
  auto [y2, g2] = mx::vjp(qmm, {mx::ones({E, F, D / 32})}, {cot});
  bool gqmm = graph_has(g2[0], "SegmentedMM");
  mx::eval({g1[0], g1[1], g2[0]});  // the graphs must also run
  emit({{"fast_path", {{"gather_mm", gmm}, {"gather_qmm", gqmm}}}});
  return 0;
}

}  // namespace vjpcheck
