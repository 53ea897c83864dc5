"""MLX adapters for the gather family (named by harness.family's OpInfo records).

Each takes (operands, lhs, rhs, sorted_indices, params) like harness.mlx_ops;
the index array arrives as `lhs`. With params["steps"] = S the index array's
leading axis is S separate calls, so MLX must accumulate their gradients.
"""
from __future__ import annotations

import mlx.core as mx
import mlx.nn as nn


def _steps(params) -> int:
    return int(params.get("steps", 1))


def _stacked(fn, idx, params):
    if _steps(params) > 1:
        return mx.stack([fn(idx[s]) for s in range(_steps(params))])
    return fn(idx)


def take(ops, lhs, rhs, sorted_indices, params):
    return _stacked(lambda i: mx.take(ops["a"], i, axis=int(params.get("axis", 0))), lhs, params)


def getitem(ops, lhs, rhs, sorted_indices, params):
    return _stacked(lambda i: ops["a"][i], lhs, params)


def embedding(ops, lhs, rhs, sorted_indices, params):
    V, D = ops["weight"].shape
    emb = nn.Embedding(V, D)
    emb.weight = ops["weight"]   # the traced primal, so the VJP is taken through the module
    return _stacked(emb, lhs, params)


def take_along_axis(ops, lhs, rhs, sorted_indices, params):
    return mx.take_along_axis(ops["a"], lhs, axis=int(params.get("axis", 0)))


def at_add(ops, lhs, rhs, sorted_indices, params):
    if _steps(params) == 1:
        return ops["a"].at[lhs].add(ops["v"])
    out = ops["a"]
    for s in range(_steps(params)):
        out = out.at[lhs[s]].add(ops["v"][s])
    return out


def put_along_axis(ops, lhs, rhs, sorted_indices, params):
    return mx.put_along_axis(ops["a"], lhs, ops["v"], axis=int(params.get("axis", 0)))
