"""sort: mx.sort(a, axis), MLX's Sort primitive.

Along each lane the output is the input permuted into ascending order: y[p] =
x[order[p]]. The reverse rule is the transposed permutation, dx[order[p]] =
g[p] (a scatter, not the gather the forward does). Sort::vjp recomputes the
order with argsort and writes the cotangent back with put_along_axis.

The reference, and its tie rule (ties are judged only with equal cotangents
on the tied values), is the canonical one in _support/sorting.py, which
topk and partition share. The MLX call is ops/repro/sort.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import tensor
from ._support.lanes import with_layout
from ._support.sorting import (M, M_COT, draw_cotangent, draw_values, lane_shape_and_axis, reference,
                               reference_vjp, value_cotangent)
from ._support import expression as E

# --- catalog ---------------------------------------------------------------------------------


def _case(name, a, params, cot=None, desc=""):
    return Scenario(name=f"sort/{name}", op="sort", operands={"a": a}, wrt=("a",), params=params,
                    cotangent=None if cot is None else tensor(cot), family="sort", description=desc)


def scenarios() -> list:
    m, mc = np.array(M, dtype=np.float64), np.array(M_COT, dtype=np.float64)
    ties = np.array([[2, 5, 2, -1, 5], [3, 3, 3, 3, 3], [0, 1, 0, 1, 0]], dtype=np.float64)
    strided = np.full((3, 10), 50.0)
    strided[:, ::2] = m
    return [
        _case("axis_last", tensor(m), {"axis": -1}, mc),
        _case("axis0", tensor(m), {"axis": 0}, mc),
        _case("axis_minus2", tensor(m), {"axis": -2}, mc, desc="a negative axis that is not the last"),
        _case("axis1_of_3d", tensor(np.arange(24).reshape(2, 4, 3)[:, ::-1] * 1.0 - 9), {"axis": 1},
              np.arange(24).reshape(2, 4, 3) % 5 - 2.0, desc="a middle axis, every lane reversed"),
        _case("flattened/axis_none", tensor(m), {"axis": None}, mc.reshape(-1)),
        _case("already_sorted", tensor([[-3, 0, 2, 5]]), {"axis": -1}, [[1, 2, 3, 4]],
              desc="the identity permutation"),
        _case("reversed", tensor([[5, 2, 0, -3]]), {"axis": -1}, [[1, 2, 3, 4]]),
        _case("length1", tensor(m[:, :1]), {"axis": -1}, mc[:, :1]),
        _case("strided", tensor(strided, views=[{"op": "slice", "index": [[0, 3], [0, 10, 2]]}]),
              {"axis": -1}, mc, desc="a stride-2 window; the skipped values are 50"),
        _case("transposed/axis0", tensor(m.T, views=[{"op": "transpose", "axes": [1, 0]}]), {"axis": 0},
              mc, desc="a transposed view sorted along its first (strided) axis"),
        _case("ties/value_cotangent", tensor(ties), {"axis": -1}, value_cotangent(np.sort(ties, axis=-1)),
              desc="tied values with equal cotangents: the gradient does not depend on the tie-break"),
        _case("ties/axis0", tensor(ties.T), {"axis": 0}, value_cotangent(np.sort(ties.T, axis=0), 1)),
    ]


# --- fuzz strategy -------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    shape, axis = lane_shape_and_axis(draw)
    values, mode = draw_values(draw, shape, axis)
    params = {"axis": axis}
    y = reference({"a": values}, params)
    cot, cmode = draw_cotangent(draw, y, 1.0, mode, dtype)
    return D.finish(Scenario(name="", op="sort", operands={"a": with_layout(draw, values, dtype)},
                             wrt=("a",), cotangent=cot, params=params, family="sort",
                             description=f"generated: axis {axis}, {mode} values, cotangent {cmode}"))


def call_expression(params, names) -> str:
    return E.call("mx.sort", names["a"], axis=E.lit(params.get("axis", -1)))


OPS = (OpInfo(
    name="sort", summary="mx.sort (Sort): any axis, views, ties with equal cotangents",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    exact=True, mlx_call=".ops.repro.sort:mlx_call", call_expression=call_expression,
    primitives=("Sort", "Reshape"), dtypes=("float32", "float16", "bfloat16"), complex=False,   # the float64 reference is real-only (docs/checking.md)
    scenarios=scenarios, strategy=fuzz_case,
    rule="y[p] = x[order[p]], each lane in ascending order; dx[order[p]] = g[p] "
         "(tied values only with equal cotangents)"),)
