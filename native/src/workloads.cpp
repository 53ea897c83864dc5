#include "workloads.hpp"

#include <time.h>

#include <chrono>
#include <iostream>
#include <map>
#include <numeric>
#include <set>

#include <mlx/primitives.h>

#include "mlx_ops.hpp"

namespace vjpcheck {

namespace {

using Arrays = std::vector<mx::array>;
using Fn = std::function<Arrays(const Arrays&)>;

// One workload made ready: its inputs (evaluated before any timing) and the step that
// builds one iteration's outputs (the forward and its gradient) from them.
struct Prepared {
  Arrays inputs;
  Fn step;
};

struct Workload {
  const char* name;
  const char* what;  // the call and its shapes, printed by bench/speed.py
  std::function<Prepared()> prepare;
};

mx::array key(int k) { return mx::random::key(k); }
mx::array normal(const mx::Shape& shape, int k, float scale = 1.0f) {
  return mx::random::normal(shape, mx::float32, 0.0f, scale, key(k));
}
mx::array uniform(const mx::Shape& shape, float lo, float hi, int k) {
  return mx::random::uniform(lo, hi, shape, mx::float32, key(k));
}
mx::array randint(const mx::Shape& shape, int hi, int k) {
  return mx::astype(mx::random::randint(0, hi, shape, mx::int32, key(k)), mx::uint32);
}

// Expert ids of T rows spread evenly over E experts, non-decreasing: the order a MoE
// layer sorts its rows into before the expert matmuls.
mx::array sorted_ids(int T, int E) {
  std::vector<uint32_t> ids(T);
  for (int t = 0; t < T; ++t) ids[t] = uint32_t((int64_t(t) * E) / T);
  return mx::array(ids.begin(), {T}, mx::uint32);
}

// The forward of f at args and its VJP with respect to args[wrt], with fixed random
// cotangents (the shapes come from one forward made while preparing).
Prepared vjp_of(Arrays args, std::vector<int> wrt, Fn f) {
  Arrays cots;
  int k = 1000;
  for (auto& o : f(args)) cots.push_back(normal(o.shape(), k++));
  Arrays inputs = args;
  inputs.insert(inputs.end(), cots.begin(), cots.end());
  size_t n = args.size();
  auto step = [n, wrt, f](const Arrays& in) {
    Arrays base(in.begin(), in.begin() + n), cot(in.begin() + n, in.end()), primals;
    for (int w : wrt) primals.push_back(base[w]);
    auto g = [&base, &wrt, &f](const Arrays& d) {
      Arrays a = base;
      for (size_t i = 0; i < wrt.size(); ++i) a[wrt[i]] = d[i];
      return f(a);
    };
    auto [outs, grads] = mx::vjp(g, primals, cot);
    outs.insert(outs.end(), grads.begin(), grads.end());
    return outs;
  };
  return {inputs, step};
}

// The forward of f and its JVP with respect to every argument, with random tangents.
Prepared jvp_of(Arrays args, Fn f) {
  Arrays inputs = args;
  for (size_t i = 0; i < args.size(); ++i) inputs.push_back(normal(args[i].shape(), 2000 + int(i)));
  size_t n = args.size();
  auto step = [n, f](const Arrays& in) {
    auto [outs, tans] = mx::jvp(f, Arrays(in.begin(), in.begin() + n), Arrays(in.begin() + n, in.end()));
    outs.insert(outs.end(), tans.begin(), tans.end());
    return outs;
  };
  return {inputs, step};
}

// The forward of f alone (the patch changes a kernel that inference also runs).
Prepared forward_of(Arrays args, Fn f) {
  return {args, f};
}

// f mapped over axis 0 of every argument (the vmap rule is what the patch changes).
Prepared vmap_of(Arrays args, Fn f) {
  auto step = [f](const Arrays& in) { return mx::vmap(f)(in); };
  return {args, step};
}

Arrays one(mx::array a) { return {std::move(a)}; }

// --- the gather pair (MoE layers) ------------------------------------------------------

Prepared gather_mm_moe(int T, int D, int F, int E, bool sorted) {
  auto ids = sorted ? sorted_ids(T, E) : randint({T}, E, 3);
  return vjp_of({normal({T, 1, D}, 1), normal({E, D, F}, 2, 0.05f), ids}, {0, 1}, [sorted](const Arrays& a) {
    return one(mx::gather_mm(a[0], a[1], std::nullopt, a[2], sorted));
  });
}

// x (T, 1, D) against E quantized (F, D) experts, 4 bits, groups of 64, rows sorted.
Prepared gather_qmm_moe(int T, int D, int F, int E, std::vector<int> wrt) {
  auto q = mx::quantize(normal({E, F, D}, 2, 0.05f), 64, 4);
  return vjp_of({normal({T, 1, D}, 1), q[0], q[1], q[2], sorted_ids(T, E)}, wrt, [](const Arrays& a) {
    return one(gather_qmm_call(a[0], a[1], a[2], a[3], std::nullopt, a[4], true, 64, 4, "affine", true));
  });
}

Prepared quantized_matmul(int B, int D, int F, std::vector<int> wrt) {
  auto q = mx::quantize(normal({F, D}, 2, 0.05f), 64, 4);
  return vjp_of({normal({B, D}, 1), q[0], q[1], q[2]}, wrt, [](const Arrays& a) {
    return one(mx::quantized_matmul(a[0], a[1], a[2], a[3], true, 64, 4));
  });
}

// --- scatter and slice updates (embedding-style row updates) --------------------------

enum class Scatter { Set, Add, Max };

Prepared scatter_rows(Scatter kind, int N, int D, int K) {
  // .set writes each row once (repeated rows are the defective corner); .add and
  // .maximum take repeated rows, as token ids do.
  mx::array idx = kind == Scatter::Set
                      ? mx::astype(mx::slice(mx::random::permutation(N, key(3)), {0}, {K}), mx::uint32)
                      : randint({K}, N, 3);
  return vjp_of({normal({N, D}, 1), normal({K, 1, D}, 2), idx}, {0, 1}, [kind](const Arrays& a) {
    Arrays ix{a[2]};
    std::vector<int> axes{0};
    if (kind == Scatter::Set) return one(mx::scatter(a[0], ix, a[1], axes));
    if (kind == Scatter::Add) return one(mx::scatter_add(a[0], ix, a[1], axes));
    return one(mx::scatter_max(a[0], ix, a[1], axes));
  });
}

const std::vector<Workload>& registry() {
  static const std::vector<Workload> all = {
      {"gather_mm_sorted", "gather_mm x (512,1,256) @ w (8,256,256), sorted right ids; VJP x, w",
       [] { return gather_mm_moe(512, 256, 256, 8, true); }},
      {"gather_mm_unsorted", "gather_mm x (128,1,128) @ w (8,128,128), random right ids; VJP x, w",
       [] { return gather_mm_moe(128, 128, 128, 8, false); }},
      {"gather_qmm_sorted", "gather_qmm x (256,1,256), w 4-bit (8,256,256) g64, sorted ids; VJP x",
       [] { return gather_qmm_moe(256, 256, 256, 8, {0}); }},
      {"gather_qmm_sorted_scales",
       "gather_qmm x (256,1,256), w 4-bit (8,256,256) g64, sorted ids; VJP x, scales, biases",
       [] { return gather_qmm_moe(256, 256, 256, 8, {0, 2, 3}); }},
      {"quantized_matmul", "quantized_matmul x (128,512), w 4-bit (512,512) g64; VJP x",
       [] { return quantized_matmul(128, 512, 512, {0}); }},
      {"quantized_matmul_scales",
       "quantized_matmul x (128,512), w 4-bit (512,512) g64; VJP x, scales, biases",
       [] { return quantized_matmul(128, 512, 512, {0, 2, 3}); }},
      {"block_masked_mm",
       "block_masked_mm a (4,256,256) @ b (4,256,256), block 32, bool out/lhs/rhs masks; VJP a, b",
       [] {
         auto mask = [](int k) { return mx::random::bernoulli(0.7f, {4, 8, 8}, key(k)); };
         return vjp_of({normal({4, 256, 256}, 1), normal({4, 256, 256}, 2), mask(3), mask(4), mask(5)},
                       {0, 1}, [](const Arrays& a) {
                         return one(mx::block_masked_mm(a[0], a[1], 32, a[2], a[3], a[4]));
                       });
       }},
      {"hadamard_pow2", "hadamard_transform x (512,1024); VJP x",
       [] { return vjp_of({normal({512, 1024}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::hadamard_transform(a[0])); }); }},
      {"hadamard_m12", "hadamard_transform x (512,768) (12 x 64, a symmetric factor); VJP x",
       [] { return vjp_of({normal({512, 768}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::hadamard_transform(a[0])); }); }},
      {"conv2d", "conv2d x (16,16,16,32), w (32,3,3,32), padding 1; VJP x, w",
       [] { return vjp_of({normal({16, 16, 16, 32}, 1), normal({32, 3, 3, 32}, 2, 0.1f)}, {0, 1},
                          [](const Arrays& a) { return one(mx::conv2d(a[0], a[1], {1, 1}, {1, 1})); }); }},
      {"conv1d_strided", "conv1d x (4,512,32), w (32,3,32), stride 2, padding 1; VJP x, w",
       [] { return vjp_of({normal({4, 512, 32}, 1), normal({32, 3, 32}, 2, 0.1f)}, {0, 1},
                          [](const Arrays& a) { return one(mx::conv1d(a[0], a[1], 2, 1)); }); }},
      {"topk_router", "topk k=4 of router scores (4096,64) along the last axis; VJP",
       [] { return vjp_of({normal({4096, 64}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::topk(a[0], 4, -1)); }); }},
      {"topk_vocab", "topk k=50 of logits (16,32000) along the last axis; VJP",
       [] { return vjp_of({normal({16, 32000}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::topk(a[0], 50, -1)); }); }},
      {"topk_router_forward", "topk k=4 of router scores (4096,64) along the last axis; forward only",
       [] { return forward_of({normal({4096, 64}, 1)}, [](const Arrays& a) {
           return one(mx::topk(a[0], 4, -1)); }); }},
      {"argpartition_vocab", "argpartition kth=-50 of logits (16,32000) along the last axis; forward only",
       [] { return forward_of({normal({16, 32000}, 1)}, [](const Arrays& a) {
           return one(mx::argpartition(a[0], -50, -1)); }); }},
      {"partition_median", "partition kth=32 of x (4096,64) along the last axis; VJP",
       [] { return vjp_of({normal({4096, 64}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::partition(a[0], 32, -1)); }); }},
      {"scatter_set", "a (8192,128).at[2048 distinct rows].set(v); VJP a, v",
       [] { return scatter_rows(Scatter::Set, 8192, 128, 2048); }},
      {"scatter_add", "a (16384,128).at[4096 random rows].add(v); VJP a, v",
       [] { return scatter_rows(Scatter::Add, 16384, 128, 4096); }},
      {"scatter_max", "a (8192,128).at[4096 random rows].maximum(v); VJP a, v",
       [] { return scatter_rows(Scatter::Max, 8192, 128, 4096); }},
      {"slice_update_max", "a (4096,256).at[1024:3072].maximum(v); VJP a, v",
       [] { return vjp_of({normal({4096, 256}, 1), normal({2048, 256}, 2)}, {0, 1}, [](const Arrays& a) {
           return one(mx::slice_update_max(a[0], a[1], {1024, 0}, {3072, 256}));
         }); }},
      {"pad", "pad x (32,64,64,32) by 1 on axes 1, 2 with 0; VJP x",
       [] { return vjp_of({normal({32, 64, 64, 32}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::pad(a[0], {1, 2}, {1, 1}, {1, 1}, mx::array(0.0f)));
         }); }},
      {"prod_axes", "prod of x (1024,32,32) in [0.9,1.1] over axes 1, 2; VJP x",
       [] { return vjp_of({uniform({1024, 32, 32}, 0.9f, 1.1f, 1)}, {0}, [](const Arrays& a) {
           return one(mx::prod(a[0], std::vector<int>{1, 2}));
         }); }},
      {"sign_abs", "abs(x) + sign(x), x (2048,1024) real; VJP x",
       [] { return vjp_of({normal({2048, 1024}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::add(mx::abs(a[0]), mx::sign(a[0])));
         }); }},
      {"power", "power(a, b), a (512,512) in [0.5,2], b (512,512); VJP a, b",
       [] { return vjp_of({uniform({512, 512}, 0.5f, 2.0f, 1), normal({512, 512}, 2)}, {0, 1},
                          [](const Arrays& a) { return one(mx::power(a[0], a[1])); }); }},
      {"full", "full((4096,1024), v) with v (1024,); VJP v",
       [] { return vjp_of({normal({1024}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::full({4096, 1024}, a[0]));
         }); }},
      {"cumprod", "cumprod of x (512,1024) in [0.9,1.1] along axis 1; VJP x",
       [] { return vjp_of({uniform({512, 1024}, 0.9f, 1.1f, 1)}, {0}, [](const Arrays& a) {
           return one(mx::cumprod(a[0], 1));
         }); }},
      {"logcumsumexp", "logcumsumexp of x (512,1024) normal along axis 1; VJP x",
       [] { return vjp_of({normal({512, 1024}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::logcumsumexp(a[0], 1));
         }); }},
      {"logaddexp", "logaddexp(a, b), a, b (512,512) real; VJP a, b",
       [] { return vjp_of({normal({512, 512}, 1), normal({512, 512}, 2)}, {0, 1},
                          [](const Arrays& a) { return one(mx::logaddexp(a[0], a[1])); }); }},
      {"addmm_jvp", "addmm(c, a, b), alpha = beta = 1, c (384,384), a (384,768), b (768,384); JVP",
       [] { return jvp_of({normal({384, 384}, 1), normal({384, 768}, 2), normal({768, 384}, 3)},
                          [](const Arrays& a) { return one(mx::addmm(a[0], a[1], a[2])); }); }},
      {"slice_reverse", "x (2048,2048)[::-1, ::2]; VJP x",
       [] { return vjp_of({normal({2048, 2048}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::slice(a[0], {-1, 0}, {-2049, 2048}, {-1, 2}));
         }); }},
      {"vmap_bitwise", "vmap over 32 of a ^ b, both batched, int32 (1024,256) each",
       [] {
         auto ints = [](int k) { return mx::random::randint(0, 1 << 20, {32, 1024, 256}, mx::int32, key(k)); };
         return vmap_of({ints(1), ints(2)}, [](const Arrays& a) { return one(mx::bitwise_xor(a[0], a[1])); });
       }},
      {"vmap_not_equal", "vmap over 32 of a != b, both batched, float32 (1024,256) each",
       [] { return vmap_of({normal({32, 1024, 256}, 1), normal({32, 1024, 256}, 2)},
                           [](const Arrays& a) { return one(mx::not_equal(a[0], a[1])); }); }},
      {"irfft_jvp", "irfft(x, n = 1024) of x complex64 (256,513), and its JVP",
       [] {
         // the forward and the tangent are transforms of one size (the patch makes the
         // primitive carry it); an even n is the common, non-defective call
         Arrays in = {mx::fft::rfft(normal({256, 1024}, 1), -1), mx::fft::rfft(normal({256, 1024}, 2), -1)};
         auto step = [](const Arrays& a) {
           auto f = [](const Arrays& x) { return one(mx::fft::irfft(x[0], 1024, -1)); };
           auto [outs, tans] = mx::jvp(f, Arrays{a[0]}, Arrays{a[1]});
           outs.insert(outs.end(), tans.begin(), tans.end());
           return outs;
         };
         return Prepared{in, step};
       }},
      {"vmap_irfft", "vmap over 32 of irfft(x, n = 512), x complex64 (32,64,257)",
       [] { return vmap_of({mx::fft::rfft(normal({32, 64, 512}, 1), -1)},
                           [](const Arrays& a) { return one(mx::fft::irfft(a[0], 512, -1)); }); }},
      {"addmm_beta_transposed_c", "addmm(c.T, a, b), alpha 1, beta 0.5, c (384,384), a (384,768), b (768,384); VJP a, b, c",
       [] { return vjp_of({normal({384, 384}, 1), normal({384, 768}, 2), normal({768, 384}, 3)}, {0, 1, 2},
                          [](const Arrays& a) {
                            return one(mx::addmm(mx::transpose(a[0]), a[1], a[2], 1.0f, 0.5f));
                          }); }},
      {"slice_update_prod", "a (4096,256).at[1024:3072].multiply(v), float32; VJP a, v",
       [] { return vjp_of({normal({4096, 256}, 1), normal({2048, 256}, 2)}, {0, 1}, [](const Arrays& a) {
           return one(mx::slice_update_prod(a[0], a[1], {1024, 0}, {3072, 256}));
         }); }},
      {"checkpoint_grad", "checkpoint(tanh(x @ w) * x), x (512,512), w (512,512); VJP x, w",
       [] {
         auto body = [](const Arrays& a) { return one(mx::tanh(mx::matmul(a[0], a[1])) * a[0]); };
         return vjp_of({normal({512, 512}, 1), normal({512, 512}, 2, 0.05f)}, {0, 1}, mx::checkpoint(body));
       }},
      {"vmap_equal", "vmap over 32 of a == b, both batched, float32 (1024,256) each",
       [] { return vmap_of({normal({32, 1024, 256}, 1), normal({32, 1024, 256}, 2)},
                           [](const Arrays& a) { return one(mx::equal(a[0], a[1])); }); }},
      {"vmap_repeated_output", "vmap over 32 of x -> (tanh(x), tanh(x)), float32 (1024,256): one array returned twice",
       [] { return vmap_of({normal({32, 1024, 256}, 1)}, [](const Arrays& a) {
           auto t = mx::tanh(a[0]);
           return Arrays{t, t};
         }); }},
      {"vmap_expand_dims", "vmap over 32 of expand_dims(x, (0, 2)) * 2, float32 (1024,256)",
       [] { return vmap_of({normal({32, 1024, 256}, 1)}, [](const Arrays& a) {
           return one(mx::multiply(mx::expand_dims(a[0], {0, 2}), mx::array(2.0f)));
         }); }},
      {"vmap_take_grad", "vmap over 32 cotangents of the VJP of take(x, 512 random rows), x (1024,256)",
       [] {
         auto x = normal({1024, 256}, 1);
         auto idx = randint({512}, 1024, 2);
         return vmap_of({normal({32, 512, 256}, 3)}, [x, idx](const Arrays& a) {
           auto f = [idx](const Arrays& p) { return one(mx::take(p[0], idx, 0)); };
           return mx::vjp(f, Arrays{x}, Arrays{a[0]}).second;
         });
       }},
      {"put_along_axis_grad", "put_along_axis(a, idx, v, axis 1), a (1024,256), idx, v (1024,64); VJP a, v",
       [] {
         auto idx = randint({1024, 64}, 256, 3);
         return vjp_of({normal({1024, 256}, 1), normal({1024, 64}, 2)}, {0, 1}, [idx](const Arrays& a) {
           return one(mx::put_along_axis(a[0], idx, a[1], 1));
         });
       }},
      {"sum_rows", "sum(x, axis 1) and sum(x.T, axis 0), x float32 (2048,1024); VJP x",
       [] { return vjp_of({normal({2048, 1024}, 1)}, {0}, [](const Arrays& a) {
           return Arrays{mx::sum(a[0], 1), mx::sum(mx::transpose(a[0]), 0)};
         }); }},
      {"take_grad", "take(x, 8192 random rows), x float32 (4096,256); VJP x (a scatter_add)",
       [] {
         auto idx = randint({8192}, 4096, 2);
         return vjp_of({normal({4096, 256}, 1)}, {0}, [idx](const Arrays& a) {
           return one(mx::take(a[0], idx, 0));
         });
       }},
      {"compile_shapeless_elementwise", "compile(shapeless) of exp(a + b) * c, a (1024,256), b (256,), c (1024,1)",
       [] {
         auto f = mx::compile(
             [](const Arrays& a) { return one(mx::multiply(mx::exp(mx::add(a[0], a[1])), a[2])); }, true);
         return Prepared{{normal({1024, 256}, 1), normal({256}, 2), normal({1024, 1}, 3)}, f};
       }},
      {"norm_all", "linalg::norm(x) of all elements, x float32 (1024,1024); VJP x",
       [] { return vjp_of({normal({1024, 1024}, 1)}, {0}, [](const Arrays& a) {
           return one(mx::linalg::norm(a[0]));
         }); }},
      {"compile_shapeless_slice_update", "compile(shapeless) of slice_update(a, u, rows 1024:3072), a (4096,256)",
       [] {
         auto f = mx::compile(
             [](const Arrays& a) { return one(mx::slice_update(a[0], a[1], mx::Shape{1024, 0}, mx::Shape{3072, 256})); }, true);
         return Prepared{{normal({4096, 256}, 1), normal({2048, 256}, 2)}, f};
       }},
  };
  return all;
}

// How many of each primitive the graph behind `outs` holds, down to evaluated arrays.
std::map<std::string, int> graph_ops(const Arrays& outs) {
  std::map<std::string, int> count;
  std::set<std::uintptr_t> seen;
  std::set<const mx::Primitive*> nodes;  // a multi-output primitive is one node
  Arrays todo = outs;
  while (!todo.empty()) {
    mx::array a = todo.back();
    todo.pop_back();
    if (!seen.insert(a.id()).second || !a.has_primitive()) continue;
    auto& p = a.primitive();
    if (nodes.insert(&p).second) count[p.name()]++;
    for (auto& in : a.inputs()) todo.push_back(in);
  }
  return count;
}

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

}  // namespace

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (auto& w : registry()) names.push_back(w.name);
  return names;
}

int bench_workload(char** args, const std::function<void(const json&)>& emit) {
  std::string name = args[0];
  int R = 0;
  try {
    R = std::stoi(args[1]);
  } catch (const std::exception&) {
  }
  const Workload* w = nullptr;
  for (auto& c : registry())
    if (name == c.name) w = &c;
  if (w == nullptr || R < 1) {
    std::cerr << "vjpcheck-native: --bench needs a workload name (--bench-list) and a positive count\n";
    return 2;
  }
  Prepared p = w->prepare();
  mx::eval(p.inputs);
  auto graph = graph_ops(p.step(p.inputs));
  // Wall time, and the process's CPU time: on a machine shared with other work the wall
  // clock also counts the time spent waiting for a core.
  std::vector<double> seconds, cpu_seconds;
  for (int r = -2; r < R; ++r) {  // two warm-up rounds (first-touch page faults)
    double c0 = cpu_now();
    auto t0 = std::chrono::steady_clock::now();
    mx::eval(p.step(p.inputs));
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r >= 0) seconds.push_back(s), cpu_seconds.push_back(cpu_now() - c0);
  }
  emit({{"bench", name}, {"what", w->what}, {"seconds", seconds}, {"cpu_seconds", cpu_seconds},
        {"graph", graph}});
  return 0;
}

}  // namespace vjpcheck
