#include "execute.hpp"

#include <chrono>
#include <cxxabi.h>
#include <algorithm>
#include <memory>
#include <new>
#include <stdexcept>
#include <typeinfo>

#include "mlx_ops.hpp"

namespace vjpcheck {

Tolerance Tolerances::get(const std::string& dtype, bool fd_kind) const {
  const json& table = fd_kind ? fd : reference;
  if (!table.contains(dtype)) throw std::invalid_argument("no tolerance for dtype '" + dtype + "'");
  return {table[dtype][0].get<double>(), table[dtype][1].get<double>()};
}

static mx::Dtype mx_dtype(const std::string& name) {
  if (name == "float32") return mx::float32;
  if (name == "float16") return mx::float16;
  if (name == "bfloat16") return mx::bfloat16;
  if (name == "float64") return mx::float64;
  throw std::invalid_argument("unsupported dtype '" + name + "'");
}

static mx::Shape mx_shape(const Dims& d) { return mx::Shape(d.begin(), d.end()); }

static mx::array from_host(const Host& h, mx::Dtype dtype) {
  std::vector<float> f(h.v.begin(), h.v.end());
  auto a = mx::array(f.begin(), mx_shape(h.shape), mx::float32);
  return dtype == mx::float32 ? a : mx::astype(a, dtype);
}

// Replays a view with MLX ops so MLX sees a genuine view onto the storage.
static mx::array mlx_view(const mx::array& a, const json& view) {
  auto op = view.at("op").get<std::string>();
  if (op == "slice") {
    mx::Shape start(a.ndim(), 0), stop = a.shape(), step(a.ndim(), 1);
    auto& index = view.at("index");
    for (size_t k = 0; k < index.size(); ++k) {
      auto sp = slice_span(index[k], a.shape(int(k)));
      if (sp.step < 0) throw std::invalid_argument("negative slice steps are not supported natively");
      start[k] = int(sp.start);
      stop[k] = int(sp.stop);
      step[k] = int(sp.step);
    }
    return mx::slice(a, start, stop, step);
  }
  if (op == "transpose") return mx::transpose(a, view.at("axes").get<std::vector<int>>());
  if (op == "reshape") return mx::reshape(a, mx_shape(view.at("shape").get<Dims>()));
  if (op == "broadcast_to") return mx::broadcast_to(a, mx_shape(view.at("shape").get<Dims>()));
  if (op == "expand_dims") return mx::expand_dims(a, view.at("axis").get<int>());
  throw std::invalid_argument("unknown view op '" + op + "'");
}

static mx::array to_mlx(const json& t) {
  auto a = from_host(storage(t), mx_dtype(t.value("dtype", "float32")));
  mx::eval(a);  // evaluated storage first: the views below are real views onto it
  if (t.contains("views"))
    for (auto& view : t["views"]) a = mlx_view(a, view);
  return a;
}

// Read any (possibly strided) array back as float64, row-major logical order.
template <class T>
static void read_strided(const mx::array& a, Host& out) {
  const T* p = a.data<T>();
  Dims idx(a.ndim(), 0);
  for (size_t flat = 0; flat < out.size(); ++flat) {
    int64_t off = 0;
    for (size_t k = 0; k < idx.size(); ++k) off += idx[k] * a.strides()[k];
    out.v[flat] = double(p[off]);
    for (int k = int(idx.size()) - 1; k >= 0; --k) {
      if (++idx[k] < a.shape(k)) break;
      idx[k] = 0;
    }
  }
}

static Host to_host(mx::array a) {
  if (a.dtype() != mx::float64 && a.dtype() != mx::float32) a = mx::astype(a, mx::float32);
  mx::eval(a);
  Host out = Host::zeros(Dims(a.shape().begin(), a.shape().end()));
  if (a.dtype() == mx::float64) read_strided<double>(a, out);
  else read_strided<float>(a, out);
  return out;
}

// The scenario's MLX call as a function of its differentiated operands.
struct Call {
  const json& s;
  const RefOp& ref_op;
  const MlxCall& fn;
  MlxOperands ops;
  std::optional<mx::array> lhs, rhs;
  std::vector<std::string> wrt;
  std::vector<mx::array> primals;

  Call(const json& scen, const RefOp& r, const MlxCall& f) : s(scen), ref_op(r), fn(f) {
    // Index arrays are operands of the call record (scenario/3), absent when omitted.
    lhs = indices(s.at("operands").value("lhs_indices", json()));
    rhs = indices(s.at("operands").value("rhs_indices", json()));
    for (auto& [name, t] : s.at("operands").items()) {
      if (name == "lhs_indices" || name == "rhs_indices") continue;
      bool integer = std::find(r.integer_operands.begin(), r.integer_operands.end(), name) !=
                     r.integer_operands.end();
      if (integer) ops.integers[name] = logical(t);
      else ops.arrays.insert_or_assign(name, to_mlx(t));
    }
    wrt = s.at("wrt").get<std::vector<std::string>>();
    for (auto& w : wrt) primals.push_back(ops.arrays.at(w));
  }

  static std::optional<mx::array> indices(const json& t) {
    if (t.is_null()) return std::nullopt;
    Host h = logical(t);
    std::vector<uint32_t> v(h.v.begin(), h.v.end());
    return mx::array(v.begin(), mx_shape(h.shape), mx::uint32);
  }

  mx::array operator()(const std::vector<mx::array>& diff) const {
    MlxOperands o = ops;
    for (size_t k = 0; k < wrt.size(); ++k) o.arrays.insert_or_assign(wrt[k], diff[k]);
    const json params = s.value("params", json::object());
    return fn(o, lhs, rhs, params.value("sorted_indices", false), params);
  }

  mx::array pair_loss(const std::vector<mx::array>& diff) const {
    auto y = (*this)(diff);
    y = mx::reshape(y, {-1, y.shape(-2), y.shape(-1)});
    auto d = mx::subtract(mx::take(y, 0, 0), mx::take(y, 1, 0));
    return mx::multiply(mx::array(0.5f), mx::sum(mx::square(d)));
  }
};

// The scalar whose gradient the VJP is, evaluated in float64 from MLX's forward.
static double objective64(const json& s, const Host& y, const Host& g) {
  if (s.value("objective", "vjp") == "pair_loss") return ref::pair_loss(y);
  double acc = 0;
  for (size_t k = 0; k < y.size(); ++k) acc += g.v[k] * y.v[k];
  return acc;
}

// Central differences through the actual MLX forward, one element at a time.
static Named finite_differences(const Call& call, const Host& g) {
  double h = call.s.at("fd_step").get<double>();
  Named out;
  for (size_t pos = 0; pos < call.wrt.size(); ++pos) {
    Host base = to_host(call.primals[pos]);  // float32 values, logical order
    Host grad = Host::zeros(base.shape);
    for (size_t i = 0; i < base.size(); ++i) {
      double vals[2];
      for (int k = 0; k < 2; ++k) {
        std::vector<float> bumped(base.v.begin(), base.v.end());
        bumped[i] += float((k == 0 ? 1.0 : -1.0) * h);
        auto args = call.primals;
        args[pos] = mx::astype(mx::array(bumped.begin(), mx_shape(base.shape), mx::float32),
                               call.primals[pos].dtype());
        vals[k] = objective64(call.s, to_host(call(args)), g);
      }
      grad.v[i] = (vals[0] - vals[1]) / (2 * h);
    }
    out.emplace_back("fd:" + call.wrt[pos], grad);
  }
  return out;
}

static std::map<std::string, Host> observe(const Call& call, const Host& g) {
  std::map<std::string, Host> obs;
  auto& s = call.s;
  std::vector<mx::array> grads;
  mx::array y = mx::array(0.0f);
  std::vector<int> argnums(call.wrt.size());
  for (size_t k = 0; k < argnums.size(); ++k) argnums[k] = int(k);
  if (s.value("objective", "vjp") == "pair_loss") {
    auto loss_fn = [&call](const std::vector<mx::array>& a) { return call.pair_loss(a); };
    auto [loss, gs] = mx::value_and_grad(loss_fn, argnums)(call.primals);
    grads = gs;
    y = call(call.primals);
    obs["loss"] = to_host(loss);
    auto first = [loss_fn](const std::vector<mx::array>& a) {
      return mx::value_and_grad(loss_fn, 0)(a).second[0];
    };
    auto hvp = mx::grad([first](const std::vector<mx::array>& a) { return mx::sum(first(a)); },
                        0)(call.primals);
    obs["hvp:" + call.wrt[0]] = to_host(hvp[0]);
  } else {
    auto cot = from_host(g, mx_dtype(dtype_of(s)));
    auto fn = [&call](const std::vector<mx::array>& a) { return std::vector<mx::array>{call(a)}; };
    auto [outs, gs] = mx::vjp(fn, call.primals, {cot});
    y = outs[0];
    grads = gs;
  }
  obs["forward"] = to_host(y);
  for (size_t k = 0; k < call.wrt.size(); ++k) obs["grad:" + call.wrt[k]] = to_host(grads[k]);
  if (!s.value("fd_step", json()).is_null())
    for (auto& [k, v] : finite_differences(call, g)) obs[k] = v;
  return obs;
}

static std::string error_text(const std::exception& e) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status), std::free);
  std::string text = std::string(status == 0 ? name.get() : typeid(e).name()) + ": " + e.what();
  text = text.substr(0, text.find('\n'));
  return text.substr(0, 500);
}

static std::string status_of(const json& checks, const json& error) {
  if (!error.is_null() || checks.empty()) return "error";
  for (auto& c : checks)
    if (!c["passed"].get<bool>()) return "fail";
  return "pass";
}

// The Python exception type MLX's bindings raise for a C++ exception, so that a
// finding's signature reads the same whether the wheel or this binary found it.
static std::string python_type(const std::exception& e) {
  if (dynamic_cast<const std::out_of_range*>(&e)) return "IndexError";
  if (dynamic_cast<const std::overflow_error*>(&e)) return "OverflowError";
  if (dynamic_cast<const std::invalid_argument*>(&e) || dynamic_cast<const std::domain_error*>(&e) ||
      dynamic_cast<const std::length_error*>(&e) || dynamic_cast<const std::range_error*>(&e))
    return "ValueError";
  if (dynamic_cast<const std::bad_alloc*>(&e)) return "MemoryError";
  return "RuntimeError";
}

static std::string first_line(const std::string& text) {
  return text.substr(0, std::min(text.find('\n'), size_t(500)));
}

// Exactly zero: the smallest positive normal double, so that no tolerance is
// zero, yet any nonzero float32 value fails (as harness/fuzz/oracles.py).
static constexpr double EXACT = 2.2250738585072014e-308;

static json exact_zeros(const std::string& name, const Host& obs, const Host& exp) {
  if (obs.shape != exp.shape) return nullptr;
  std::vector<double> o, e;
  for (size_t k = 0; k < exp.size(); ++k)
    if (exp.v[k] == 0.0) {
      o.push_back(obs.v[k]);
      e.push_back(0.0);
    }
  if (e.empty()) return nullptr;
  Dims shape{int64_t(e.size())};
  return compare("zero:" + name, Host(shape, o), Host(shape, e), {EXACT, 0.0}, "exact_zero");
}

json serve_scenario(const json& s, const Tolerances& tol, const StageFn& stage) {
  auto t0 = std::chrono::steady_clock::now();
  std::string name = s.at("name"), op = s.at("op");
  const RefOp* ref_op = find_ref_op(op);
  const MlxCall* fn = find_mlx_op(op);
  if (!ref_op || !fn) return {{"skip", {{"scenario", name}, {"reason", skip_reason(op)}}}};
  if (s.value("objective", "vjp") != "vjp")
    return {{"skip", {{"scenario", name}, {"reason", "only the plain VJP objective is served"}}}};
  Named exp;
  Host g;
  std::string dtype;
  try {
    exp = expected(s);
    g = cotangent(s, exp.front().second);
    dtype = dtype_of(s);
  } catch (const std::exception& e) {
    return {{"skip", {{"scenario", name}, {"reason", "the float64 reference rejects it: " + error_text(e)}}}};
  }
  Tolerance t = tol.get(dtype, false);
  stage("forward", json::array());
  std::optional<Call> call;
  json fwd;
  try {
    call.emplace(s, *ref_op, *fn);
    fwd = compare("forward", to_host((*call)(call->primals)), exp.front().second, t);
  } catch (const std::exception& e) {  // MLX rejects the call itself: not a gradient defect
    return {{"invalid", "forward raised " + error_text(e)}};
  }
  stage("vjp", json::array({fwd}));
  json rec = {{"scenario", name}, {"device", "cpu"}, {"checks", json::array()},
              {"error", nullptr}, {"fd", json::object()}};
  json vjp_error = nullptr;
  try {
    auto cot = from_host(g, mx_dtype(dtype));
    auto fn_all = [&call](const std::vector<mx::array>& a) { return std::vector<mx::array>{(*call)(a)}; };
    auto [outs, grads] = mx::vjp(fn_all, call->primals, {cot});
    mx::eval(outs);
    mx::eval(grads);
    json checks = json::array({compare("forward", to_host(outs[0]), exp.front().second, t)});
    std::vector<std::pair<std::string, Host>> observed;
    for (size_t k = 0; k < call->wrt.size(); ++k) {
      observed.emplace_back(call->wrt[k], to_host(grads[k]));
      checks.push_back(compare("grad:" + call->wrt[k], observed.back().second, exp.at(k + 1).second, t));
    }
    if (dtype == "float32")
      for (size_t k = 0; k < observed.size(); ++k) {
        json z = exact_zeros(observed[k].first, observed[k].second, exp.at(k + 1).second);
        if (!z.is_null()) checks.push_back(z);
      }
    rec["checks"] = checks;
  } catch (const std::exception& e) {
    rec["error"] = error_text(e);
    rec["checks"] = json::array({fwd});
    vjp_error = {{"type", python_type(e)}, {"message", first_line(e.what())}};
  }
  rec["status"] = status_of(rec["checks"], rec["error"]);
  rec["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {{"record", rec}, {"vjp_error", vjp_error}};
}

std::string skip_reason(const std::string& op) {
  std::string names;
  for (auto& n : supported_ops()) names += (names.empty() ? "" : ", ") + n;
  return "op '" + op + "' is not implemented by the native suite (it runs " + names + ")";
}

json run_scenario(const json& s, const std::string& device, const Tolerances& tol) {
  auto t0 = std::chrono::steady_clock::now();
  json rec = {{"scenario", s.at("name")}, {"device", device}, {"checks", json::array()},
              {"error", nullptr}};
  try {
    const RefOp& ref_op = *find_ref_op(s.at("op"));
    Named exp = expected(s);
    Host g = cotangent(s, exp.front().second);
    Call call(s, ref_op, *find_mlx_op(s.at("op")));
    auto obs = observe(call, g);
    std::string dtype = dtype_of(s);
    json checks = json::array();
    for (auto& [key, e] : exp) {
      auto it = obs.find(key);
      if (it == obs.end()) throw std::out_of_range("no observation for '" + key + "'");
      checks.push_back(compare(key, it->second, e, tol.get(dtype, false)));
    }
    json fd = json::object();
    if (!s.value("fd_step", json()).is_null()) {
      for (auto& w : call.wrt) {
        checks.push_back(compare("fd:" + w, obs.at("grad:" + w), obs.at("fd:" + w),
                                 tol.get(dtype, true), "fd"));
        fd["fd:" + w] = nested(obs.at("fd:" + w));
      }
    }
    rec["checks"] = checks;
    rec["fd"] = fd;
  } catch (const std::exception& e) {  // an MLX exception is a result, not a suite bug
    rec["error"] = error_text(e);
  }
  rec["status"] = status_of(rec["checks"], rec["error"]);
  rec["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

}  // namespace vjpcheck
