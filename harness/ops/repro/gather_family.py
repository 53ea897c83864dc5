"""The gather family's MLX calls, one function per op; the index array is the operand "indices"."""
import mlx.core as mx
import mlx.nn as nn
import numpy as np


def _index(operands):
    return mx.array(operands["indices"].astype(np.uint32))


def _steps(params):
    return int(params.get("steps", 1))


def _stacked(fn, idx, params):
    # steps = S > 1: S separate calls along the index array's leading axis,
    # whose gradients MLX must accumulate
    return mx.stack([fn(idx[s]) for s in range(_steps(params))]) if _steps(params) > 1 else fn(idx)


def take(operands, params):
    axis = int(params.get("axis", 0))
    return _stacked(lambda i: mx.take(operands["a"], i, axis=axis), _index(operands), params)


def getitem(operands, params):
    return _stacked(lambda i: operands["a"][i], _index(operands), params)


def embedding(operands, params):
    emb = nn.Embedding(*operands["weight"].shape)
    emb.weight = operands["weight"]   # the traced primal, so the VJP is taken through the module
    return _stacked(emb, _index(operands), params)


def take_along_axis(operands, params):
    return mx.take_along_axis(operands["a"], _index(operands), axis=int(params.get("axis", 0)))


def at_add(operands, params):
    idx, out = _index(operands), operands["a"]
    if _steps(params) == 1:
        return out.at[idx].add(operands["v"])
    for s in range(_steps(params)):
        out = out.at[idx[s]].add(operands["v"][s])
    return out


def put_along_axis(operands, params):
    return mx.put_along_axis(operands["a"], _index(operands), operands["v"], axis=int(params.get("axis", 0)))
