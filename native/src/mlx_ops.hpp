// The MLX half of the op registry: each adapter makes the scenario's call
// through MLX's C++ API. Integer operands arrive as host codes.
#pragma once

#include <functional>
#include <optional>

#include <mlx/mlx.h>

#include "host.hpp"

namespace vjpcheck {

namespace mx = mlx::core;

struct MlxOperands {
  std::map<std::string, mx::array> arrays;  // float operands (possibly views)
  std::map<std::string, Host> integers;     // integer operands, logical values
};

using MlxCall = std::function<mx::array(const MlxOperands&, const std::optional<mx::array>&,
                                        const std::optional<mx::array>&, bool, const json&)>;

const MlxCall* find_mlx_op(const std::string& op);

// Pack integer codes into uint32 words: code t of a word at bits [t*bits, (t+1)*bits).
mx::array pack_codes(const Host& codes, int bits);

// mx::gather_qmm with or without the global_scale argument (0.32.4 has it, main lacks it).
mx::array gather_qmm_call(const mx::array& x, const mx::array& w, const mx::array& scales,
                          const mx::array& biases, const std::optional<mx::array>& lhs,
                          const std::optional<mx::array>& rhs, bool transpose, int gs, int bits,
                          const std::string& mode, bool sorted);

}  // namespace vjpcheck
