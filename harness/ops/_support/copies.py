"""The exact reverse rule of an op whose every output element is a copy of one
input element (reshape, transpose, broadcast, slices, concatenation, split,
stack, ...), or a constant: shared by the shape ops and the search/sort ops.

The op's own float64 reference, run on codes instead of values, says which
input element each output element copies: operand k's element i becomes the
code k * STRIDE + i + 1, and a copy keeps its code (0 stays 0: a constant).
The VJP is then the adjoint of that 0/1 map, each input element collecting
the cotangent of every output that copies it: exact, with no differences, for
real and complex cotangents alike (the map is real, so MLX's conjugate
convention leaves it as it is).
"""
from __future__ import annotations

import numpy as np

STRIDE = 1 << 24   # codes stay exact integers in float64 for operands below 16M elements


def codes(inputs: dict, names) -> dict:
    """The inputs with each named operand replaced by its element codes."""
    out = dict(inputs)
    for k, name in enumerate(names):
        x = np.asarray(inputs[name])
        out[name] = (k * STRIDE + np.arange(x.size, dtype=np.float64) + 1).reshape(x.shape)
    return out


def copy_vjp(forward, inputs: dict, g, names) -> dict:
    """{name: gradient} for each named operand of a copying op: `forward(inputs)`
    is its float64 reference (numpy, never arithmetic on the operands)."""
    traced = np.asarray(forward(codes(inputs, names)))
    g = np.asarray(g)
    if traced.shape != g.shape:
        raise ValueError(f"cotangent shape {g.shape} != output shape {traced.shape}")
    flat, gflat = traced.reshape(-1).astype(np.int64), g.reshape(-1)
    out = {}
    for k, name in enumerate(names):
        x = np.asarray(inputs[name])
        mine = (flat > k * STRIDE) & (flat <= (k + 1) * STRIDE)
        dx = np.zeros(x.size, dtype=np.result_type(g.dtype, np.float64))
        np.add.at(dx, flat[mine] - k * STRIDE - 1, gflat[mine])
        out[name] = dx.reshape(x.shape)
    return out
