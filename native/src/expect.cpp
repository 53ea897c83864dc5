#include "expect.hpp"

#include <stdexcept>

namespace vjpcheck {

static int group_size(const json& p) { return p.at("group_size").get<int>(); }
static bool transposed(const json& p) { return p.value("transpose", true); }

static const std::map<std::string, RefOp>& registry() {
  static const std::map<std::string, RefOp> ops = {
      {"gather_mm",
       {{"a", "b"}, {"a", "b"}, {},
        [](const Inputs& in, auto& l, auto& r, const json&) {
          return ref::gather_mm(in.at("a"), in.at("b"), l, r);
        },
        [](const Inputs& in, const Host& g, auto& l, auto& r, const json&) {
          return ref::gather_mm_vjp(in.at("a"), in.at("b"), g, l, r);
        }}},
      {"gather_qmm",
       {{"x", "codes", "scales", "biases"}, {"x", "scales", "biases"}, {"codes"},
        [](const Inputs& in, auto& l, auto& r, const json& p) {
          return ref::gather_qmm(in.at("x"), in.at("codes"), in.at("scales"), in.at("biases"), l,
                                 r, group_size(p), transposed(p));
        },
        [](const Inputs& in, const Host& g, auto& l, auto& r, const json& p) {
          return ref::gather_qmm_vjp(in.at("x"), in.at("codes"), in.at("scales"),
                                     in.at("biases"), g, l, r, group_size(p), transposed(p));
        }}},
  };
  return ops;
}

const RefOp* find_ref_op(const std::string& op) {
  auto it = registry().find(op);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> names;
  for (auto& [name, _] : registry()) names.push_back(name);
  return names;
}

std::optional<Host> opt_logical(const json& t) {
  if (t.is_null()) return std::nullopt;
  return logical(t);
}

Inputs logical_inputs(const json& s) {
  Inputs in;
  for (auto& name : find_ref_op(s.at("op"))->operands) in[name] = logical(s.at("operands").at(name));
  return in;
}

std::string dtype_of(const json& s) {
  auto& first = find_ref_op(s.at("op"))->differentiable.front();
  return s.at("operands").at(first).value("dtype", "float32");
}

Host cotangent(const json& s, const Host& y) {
  if (s.value("objective", "vjp") == "pair_loss") return ref::pair_loss_cotangent(y);
  if (s.value("cotangent", json()).is_null()) return Host(y.shape, std::vector<double>(y.size(), 1.0));
  Host g = logical(s["cotangent"]);
  if (g.shape != y.shape)
    throw std::invalid_argument("cotangent shape " + dims_text(g.shape) + " != output shape " +
                                dims_text(y.shape));
  return g;
}

// H @ 1 for the pair loss: the op is affine in any single operand, so
// J v = f(x + v) - f(x) exactly, and H v = J^T (dL/dY at Y = J v).
static Host hvp_ones(const RefOp& op, const Inputs& in, const Host& y, const std::optional<Host>& l,
                     const std::optional<Host>& r, const json& p, const std::string& wrt) {
  Inputs bumped = in;
  for (auto& v : bumped[wrt].v) v += 1.0;
  Host jv = op.forward(bumped, l, r, p);
  for (size_t k = 0; k < jv.size(); ++k) jv.v[k] -= y.v[k];
  return op.vjp(in, ref::pair_loss_cotangent(jv), l, r, p).at(wrt);
}

Named expected(const json& s) {
  const RefOp& op = *find_ref_op(s.at("op"));
  Inputs in = logical_inputs(s);
  const json& operands = s.at("operands");   // index arrays are operands (scenario/3)
  auto l = opt_logical(operands.value("lhs_indices", json())), r = opt_logical(operands.value("rhs_indices", json()));
  const json params = s.value("params", json::object());
  Host y = op.forward(in, l, r, params);
  auto grads = op.vjp(in, cotangent(s, y), l, r, params);
  Named out{{"forward", y}};
  for (auto& w : s.at("wrt")) out.emplace_back("grad:" + w.get<std::string>(), grads.at(w));
  if (s.value("objective", "vjp") == "pair_loss") {
    out.emplace_back("loss", Host({}, {ref::pair_loss(y)}));
    for (auto& w : s.at("wrt"))
      out.emplace_back("hvp:" + w.get<std::string>(), hvp_ones(op, in, y, l, r, params, w));
  }
  return out;
}

}  // namespace vjpcheck
