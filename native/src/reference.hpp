// Float64 scalar-loop oracles for gather_mm / gather_qmm and their VJPs.
//
// Written from the maths, not from MLX (and never linked against it): each
// function states the rule it implements. Same semantics as harness/reference.py.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "host.hpp"

namespace vjpcheck::ref {

using Grads = std::map<std::string, Host>;

struct Selection {
  std::vector<int64_t> left, right;  // flat i_q and j_q
  Dims batch;                        // broadcast shape of the index arrays
};

// MLX's default for an omitted index array is arange over the operand's batch.
Selection resolve(const Dims& a_batch, const Dims& b_batch, const std::optional<Host>& lhs,
                  const std::optional<Host>& rhs);

// Y_q = A[i_q] @ B[j_q]
Host gather_mm(const Host& a, const Host& b, const std::optional<Host>& lhs,
               const std::optional<Host>& rhs);
// dA[l] = sum_{q: i_q = l} G_q B[j_q]^T ;  dB[l] = sum_{q: j_q = l} A[i_q]^T G_q
Grads gather_mm_vjp(const Host& a, const Host& b, const Host& g, const std::optional<Host>& lhs,
                    const std::optional<Host>& rhs);

// Affine weights W = code * scale + bias, groups of group_size along K.
// Groups run along the stored last axis (K when transposed, N otherwise), as MLX quantizes.
Host dequantize(const Host& codes, const Host& scales, const Host& biases, int group_size);
Host gather_qmm(const Host& x, const Host& codes, const Host& scales, const Host& biases,
                const std::optional<Host>& lhs, const std::optional<Host>& rhs, int group_size,
                bool transpose);
// dx by the gather_mm rule on the dequantized weights; dscale = sum_group code * dW,
// dbias = sum_group dW. Integer codes are held fixed (no derivative claimed).
Grads gather_qmm_vjp(const Host& x, const Host& codes, const Host& scales, const Host& biases,
                     const Host& g, const std::optional<Host>& lhs,
                     const std::optional<Host>& rhs, int group_size, bool transpose);

// L = 0.5 * sum((Y_0 - Y_1)^2) and dL/dY (+D on Y_0, -D on Y_1, D = Y_0 - Y_1).
double pair_loss(const Host& y);
Host pair_loss_cotangent(const Host& y);

Host swap_last(const Host& x);  // (..., R, C) -> (..., C, R)

}  // namespace vjpcheck::ref
