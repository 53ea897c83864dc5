// Expected values of a scenario from the float64 references alone (no MLX).
// Keys match the observations: "forward", "grad:<operand>", "loss", "hvp:<operand>".
#pragma once

#include <functional>
#include <optional>
#include <utility>

#include "reference.hpp"

namespace vjpcheck {

using Inputs = std::map<std::string, Host>;
using Named = std::vector<std::pair<std::string, Host>>;  // ordered like the Python dict

// The reference half of an op's registry record (the MLX half lives in mlx_ops).
struct RefOp {
  std::vector<std::string> operands, differentiable, integer_operands;
  std::function<Host(const Inputs&, const std::optional<Host>&, const std::optional<Host>&,
                     const json&)>
      forward;
  std::function<ref::Grads(const Inputs&, const Host&, const std::optional<Host>&,
                           const std::optional<Host>&, const json&)>
      vjp;
};

const RefOp* find_ref_op(const std::string& op);  // nullptr when the suite lacks it
std::vector<std::string> supported_ops();

std::optional<Host> opt_logical(const json& tensor_or_null);
Inputs logical_inputs(const json& s);
std::string dtype_of(const json& s);  // the first differentiable operand's dtype
Host cotangent(const json& s, const Host& y);
Named expected(const json& s);

}  // namespace vjpcheck
