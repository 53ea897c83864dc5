"""cumsum: mx.cumsum(a, axis, reverse=..., inclusive=...), MLX's Scan primitive.

The forward along the axis is y = M x for a 0/1 matrix M: M[i, j] = 1 when
j <= i (inclusive) or j < i (exclusive), mirrored when reversed. The reverse
rule is dx = M^T g: each input element collects the cotangents of every output
that summed it. Scan::vjp builds this from a cumsum of the cotangent in the
opposite direction, with the inclusive/exclusive shift: exactly the kind of
hand-written flag logic this harness exists for. The MLX call is
ops/repro/cumsum.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints, tensor
from ._support.lanes import from_lanes, lanes_to_input, scan_flags, summed, to_lanes
from ._support import expression as E
from ._support.complex_parts import complex_op

# --- float64 reference: the windows in _support/lanes.py -----------------------------------


def reference(inp, params):
    axis, rev, inc = scan_flags(params)
    x = to_lanes(inp["a"], axis)
    y = np.zeros(x.shape)
    n = x.shape[-1]
    for i in range(n):
        for j in summed(i, n, rev, inc):
            y[..., i] += x[..., j]
    return from_lanes(y, axis)


def reference_vjp(inp, g, params):
    """dx[j] = sum of g[i] over every output i that summed position j."""
    axis, rev, inc = scan_flags(params)
    gm = to_lanes(g, axis)
    dx = np.zeros(gm.shape)
    n = gm.shape[-1]
    for i in range(n):
        for j in summed(i, n, rev, inc):
            dx[..., j] += gm[..., i]
    return {"a": lanes_to_input(dx, np.shape(inp["a"]), axis)}


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


def call_expression(params, names) -> str:
    return E.call("mx.cumsum", names["a"], axis=E.lit(params.get("axis", 0)),
                  reverse=E.lit(params.get("reverse", False)), inclusive=E.lit(params.get("inclusive", True)))


OPS = (complex_op(OpInfo(
    name="cumsum", summary="mx.cumsum (Scan): reverse and inclusive flags, any axis",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    exact=True, multilinear=True, mlx_call=".ops.repro.cumsum:mlx_call", call_expression=call_expression,
    primitives=("Scan",), dtypes=("float32", "float16", "bfloat16"), complex=False,
    scenarios=scenarios,
    strategy=fuzz_case,
    rule="y[i] = sum of x[j] over the window S(i) (j <= i; j < i when exclusive; mirrored when "
         "reversed); dx[j] = sum of g[i] over every output i whose window holds j")),)
