#include "bench.hpp"

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

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

}  // namespace vjpcheck
