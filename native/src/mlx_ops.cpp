#include "mlx_ops.hpp"

#include <stdexcept>

namespace vjpcheck {

mx::array pack_codes(const Host& codes, int bits) {
  int per_word = 32 / bits;
  int64_t C = codes.shape.back();
  if (32 % bits || C % per_word) throw std::invalid_argument("cannot pack last axis " + std::to_string(C) + " at " + std::to_string(bits) + " bits");
  std::vector<uint32_t> words(codes.size() / per_word, 0);
  for (size_t k = 0; k < codes.size(); ++k) {
    double c = codes.v[k];
    if (c < 0 || c >= double(1u << bits)) throw std::invalid_argument("codes outside [0, " + std::to_string(1u << bits) + ")");
    words[k / per_word] |= uint32_t(c) << ((k % per_word) * bits);
  }
  mx::Shape shape(codes.shape.begin(), codes.shape.end());
  shape.back() = int(C / per_word);
  return mx::array(words.begin(), shape, mx::uint32);
}

// MLX 0.32.4 added a global_scale argument before sorted_indices; main at the
// pinned commit has not. Pick whichever signature this MLX has.
template <class X>
static mx::array gather_qmm_any(const X& x, const mx::array& w, const mx::array& scales,
                                const mx::array& biases, const std::optional<mx::array>& lhs,
                                const std::optional<mx::array>& rhs, bool transpose, int gs,
                                int bits, const std::string& mode, bool sorted) {
  if constexpr (requires {
                  mx::gather_qmm(x, w, scales, biases, lhs, rhs, transpose, gs, bits, mode,
                                 std::optional<mx::array>{}, sorted);
                }) {
    return mx::gather_qmm(x, w, scales, biases, lhs, rhs, transpose, gs, bits, mode,
                          std::optional<mx::array>{}, sorted);
  } else {
    return mx::gather_qmm(x, w, scales, biases, lhs, rhs, transpose, gs, bits, mode, sorted);
  }
}

mx::array gather_qmm_call(const mx::array& x, const mx::array& w, const mx::array& scales,
                          const mx::array& biases, const std::optional<mx::array>& lhs,
                          const std::optional<mx::array>& rhs, bool transpose, int gs, int bits,
                          const std::string& mode, bool sorted) {
  return gather_qmm_any(x, w, scales, biases, lhs, rhs, transpose, gs, bits, mode, sorted);
}

static const std::map<std::string, MlxCall>& registry() {
  static const std::map<std::string, MlxCall> ops = {
      {"gather_mm",
       [](const MlxOperands& ops, auto& lhs, auto& rhs, bool sorted, const json&) {
         return mx::gather_mm(ops.arrays.at("a"), ops.arrays.at("b"), lhs, rhs, sorted);
       }},
      {"gather_qmm",
       [](const MlxOperands& ops, auto& lhs, auto& rhs, bool sorted, const json& p) {
         int bits = p.at("bits").get<int>();
         return gather_qmm_call(ops.arrays.at("x"), pack_codes(ops.integers.at("codes"), bits),
                                ops.arrays.at("scales"), ops.arrays.at("biases"), lhs, rhs,
                                p.value("transpose", true), p.at("group_size").get<int>(), bits,
                                p.value("mode", "affine"), sorted);
       }},
  };
  return ops;
}

const MlxCall* find_mlx_op(const std::string& op) {
  auto it = registry().find(op);
  return it == registry().end() ? nullptr : &it->second;
}

}  // namespace vjpcheck
