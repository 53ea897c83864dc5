"""MLX adapters named by the op registry's `mlx_impl` paths.

Each takes (operands, lhs, rhs, sorted_indices, params); operands are mlx
arrays, except integer operands which arrive as numpy codes.
"""
from __future__ import annotations

import mlx.core as mx

from . import quant


def gather_mm(ops, lhs, rhs, sorted_indices, params):
    return mx.gather_mm(ops["a"], ops["b"], lhs_indices=lhs, rhs_indices=rhs,
                        sorted_indices=sorted_indices)


def gather_qmm(ops, lhs, rhs, sorted_indices, params):
    w = mx.array(quant.pack(ops["codes"], params["bits"]))
    return mx.gather_qmm(ops["x"], w, ops["scales"], ops["biases"], lhs_indices=lhs,
                         rhs_indices=rhs, transpose=params.get("transpose", True),
                         group_size=params["group_size"], bits=params["bits"],
                         mode=params.get("mode", "affine"), sorted_indices=sorted_indices)
