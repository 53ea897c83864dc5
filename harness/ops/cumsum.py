"""cumsum: mx.cumsum(a, axis, reverse=..., inclusive=...), MLX's Scan primitive.

The forward along the axis is y = M x for a 0/1 matrix M: M[i, j] = 1 when
j <= i (inclusive) or j < i (exclusive), mirrored when reversed. The reverse
rule is dx = M^T g: each input element collects the cotangents of every output
that summed it. Scan::vjp builds this from a cumsum of the cotangent in the
opposite direction, with the inclusive/exclusive shift: exactly the kind of
hand-written flag logic this harness exists for.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints, tensor

# --- float64 reference ---------------------------------------------------------------------


def summed(i: int, n: int, reverse: bool, inclusive: bool) -> list:
    """The input positions j that output position i sums, along an axis of length n."""
    if reverse:
        return [j for j in range(n) if j > i or (inclusive and j == i)]
    return [j for j in range(n) if j < i or (inclusive and j == i)]


def _flags(params):
    return int(params.get("axis", 0)), bool(params.get("reverse", False)), bool(params.get("inclusive", True))


def reference(inp, lhs, rhs, params):
    axis, rev, inc = _flags(params)
    x = np.moveaxis(np.asarray(inp["a"], dtype=np.float64), axis, -1)
    y = np.zeros(x.shape)
    n = x.shape[-1]
    for i in range(n):
        for j in summed(i, n, rev, inc):
            y[..., i] += x[..., j]
    return np.moveaxis(y, -1, axis)


def reference_vjp(inp, g, lhs, rhs, params):
    """dx[j] = sum of g[i] over every output i that summed position j."""
    axis, rev, inc = _flags(params)
    gm = np.moveaxis(np.asarray(g, dtype=np.float64), axis, -1)
    dx = np.zeros(gm.shape)
    n = gm.shape[-1]
    for i in range(n):
        for j in summed(i, n, rev, inc):
            dx[..., j] += gm[..., i]
    return {"a": np.moveaxis(dx, -1, axis)}


# --- the MLX call ----------------------------------------------------------------------------

def mlx_call(ops, lhs, rhs, sorted_indices, params):
    import mlx.core as mx
    axis, rev, inc = _flags(params)
    return mx.cumsum(ops["a"], axis=axis, reverse=rev, inclusive=inc)


# --- catalog: every flag combination, both axes, a strided view, a width-1 axis -----------

def _case(name, a, params, cot=None, desc=""):
    return Scenario(name=f"cumsum/{name}", op="cumsum", operands={"a": a}, wrt=("a",),
                    params=params, cotangent=cot, fd_step=1.0 / 16, family="scan", description=desc)


def scenarios() -> list:
    a = tensor(seeded_ints((3, 5), 60))
    out = [_case(f"axis{axis}/{'reverse' if rev else 'forward'}/{'inclusive' if inc else 'exclusive'}",
                 a, {"axis": axis, "reverse": rev, "inclusive": inc},
                 cot=tensor(seeded_ints((3, 5), 61 + axis)))
           for axis in (1, 0) for rev in (False, True) for inc in (True, False)]
    strided = tensor(np.arange(24) % 7 - 3, (4, 6), views=[{"op": "slice", "index": [[0, 4], [0, 6, 2]]}])
    out += [
        _case("strided/reverse/exclusive", strided, {"axis": 1, "reverse": True, "inclusive": False},
              desc="a stride-2 window of a larger buffer"),
        _case("transposed/axis0", tensor(seeded_ints((4, 3), 62), views=[{"op": "transpose", "axes": [1, 0]}]),
              {"axis": 0, "reverse": False, "inclusive": True}),
        _case("length1/exclusive", tensor(seeded_ints((3, 1), 63)), {"axis": 1, "reverse": False,
                                                                     "inclusive": False},
              desc="an exclusive scan of length 1 is all zeros; so is its gradient"),
    ]
    return out


# --- fuzz strategy -------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    rank = draw(D.irange(1, 3))
    shape = tuple(draw(D.irange(1, 5)) for _ in range(rank))
    axis = draw(D.irange(0, rank - 1))
    a = D.layout(draw, shape[:-2], shape[-2:], draw(D.irange(0, 2**16)), dtype) if rank >= 2 else \
        D.tensor(D.hashed_ints(shape, draw(D.irange(0, 2**16))), dtype=dtype)
    cot, mode = D.cotangent(draw, shape, dtype)
    rev, inc = draw(D.choice((False, True))), draw(D.choice((True, False)))
    return D.finish(Scenario(name="", op="cumsum", operands={"a": a}, wrt=("a",), cotangent=cot,
                             params={"axis": axis, "reverse": rev, "inclusive": inc}, family="scan",
                             description=f"generated: axis {axis}, cotangent {mode}"))


# --- reproducer snippet ----------------------------------------------------------------------

REPRO = r'''
INTEGER_OPERANDS = ()


def positions(i, n, reverse, inclusive):
    """Which inputs output i adds up."""
    lo, hi = (i + (0 if inclusive else 1), n) if reverse else (0, i + (1 if inclusive else 0))
    return range(lo, hi)


def ref_forward(inp, lhs, rhs, params):
    axis = params["axis"]
    x = np.moveaxis(inp["a"], axis, 0)
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        for j in positions(i, x.shape[0], params["reverse"], params["inclusive"]):
            y[i] = y[i] + x[j]
    return np.moveaxis(y, 0, axis)


def ref_vjp(inp, g, lhs, rhs, params):
    axis = params["axis"]
    gm = np.moveaxis(g, axis, 0)
    dx = np.zeros_like(gm)
    for i in range(gm.shape[0]):
        for j in positions(i, gm.shape[0], params["reverse"], params["inclusive"]):
            dx[j] = dx[j] + gm[i]
    return {"a": np.moveaxis(dx, 0, axis)}


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    return mx.cumsum(ops["a"], axis=params["axis"], reverse=params["reverse"],
                     inclusive=params["inclusive"])
'''


OPS = (OpInfo(
    name="cumsum", summary="mx.cumsum (Scan): reverse and inclusive flags, any axis",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    exact=True, multilinear=True, mlx_call=".ops.cumsum:mlx_call", scenarios=scenarios, strategy=fuzz_case,
    repro_source=REPRO),)
