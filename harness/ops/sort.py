"""sort: mx.sort(a, axis), MLX's Sort primitive.

Along each lane the output is the input permuted into ascending order: y[p] =
x[order[p]]. The reverse rule is the transposed permutation, dx[order[p]] =
g[p] (a scatter, not the gather the forward does). Sort::vjp recomputes the
order with argsort and writes the cotangent back with put_along_axis.

The reference, and its tie rule (ties are judged only with equal cotangents
on the tied values), is the canonical one in _support/sorting.py, which
topk and partition share. The MLX call is ops/repro/sort.py.

Complex input (complex64): MLX's order, lexicographic (real part, then
imaginary part; _support/sorting.py says where that comes from, and where NaN
goes), the cotangent moved unconjugated. The complex scenarios are twins of
plain ones (distinct real parts: the order is locally constant, every oracle
decides), `real_part_tie/value_cotangent` (real parts tie, the imaginary part
orders each block, the cotangent is the same over the block: differentiable,
and the forward pins the order) and `convention/real_part_tie` (different
cotangents on a block of equal real parts: MLX's VJP routes them by its order,
a non-differentiable point where only the reference and vmap oracles judge).
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import tensor
from ._support.complex_parts import complex_twin
from ._support.sorting import (M, M_COT, REAL_TIE, REAL_TIE_COT, draw_cotangent, draw_operand, draw_values,
                               lane_shape_and_axis, reference, reference_vjp, value_cotangent)
from ._support import expression as E

# --- catalog ---------------------------------------------------------------------------------


def _case(name, a, params, cot=None, desc=""):
    cdt = "complex64" if np.iscomplexobj(cot) else "float32"
    return Scenario(name=f"sort/{name}", op="sort", operands={"a": a}, wrt=("a",), params=params,
                    cotangent=None if cot is None else tensor(cot, dtype=cdt), family="sort", description=desc)


def scenarios() -> list:
    return scenarios_real() + complex_scenarios()


def scenarios_real() -> list:
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


def complex_scenarios() -> list:
    """complex64: twins of plain scenarios (distinct real parts in every lane), then
    lanes whose real parts tie (REAL_TIE: the imaginary part orders each block, one
    exact tie), with a cotangent constant over each block and with MLX's routing."""
    plain = {s.name: s for s in scenarios_real()}
    twins = [complex_twin(plain[f"sort/{n}"], seed) for n, seed in
             (("axis_last", 60), ("flattened/axis_none", 61), ("strided", 62), ("transposed/axis0", 63))]
    tie = np.array(REAL_TIE)
    srt = np.sort(tie, axis=-1)   # numpy's complex order is MLX's for finite values
    return twins + [
        _case("real_part_tie/value_cotangent/complex64", tensor(tie, dtype="complex64"), {"axis": -1},
              value_cotangent(srt), desc="equal real parts, the imaginary part orders them (MLX's lexicographic "
                                         "order); one cotangent per real part: differentiable"),
        _case("real_part_tie/value_cotangent/axis0/complex64", tensor(tie.T, dtype="complex64"), {"axis": 0},
              value_cotangent(srt.T, 2), desc="the same lanes along axis 0 (strided lanes)"),
        _case("convention/real_part_tie/complex64", tensor(tie[:2], dtype="complex64"), {"axis": -1},
              np.array(REAL_TIE_COT), desc="different cotangents on equal real parts: routed by MLX's order "
                                          "(lexicographic), where sort is not differentiable"),
    ]


# --- fuzz strategy -------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    shape, axis = lane_shape_and_axis(draw)
    values, mode = draw_values(draw, shape, axis, dtype)
    params = {"axis": axis}
    y = reference({"a": values}, params)
    cot, cmode = draw_cotangent(draw, y, 1.0, mode, dtype)
    return D.finish(Scenario(name="", op="sort", operands={"a": draw_operand(draw, values, dtype)},
                             wrt=("a",), cotangent=cot, params=params, family="sort",
                             description=f"generated: axis {axis}, {mode} values, cotangent {cmode}"))


def call_expression(params, names) -> str:
    return E.call("mx.sort", names["a"], axis=E.lit(params.get("axis", -1)))


OPS = (OpInfo(
    name="sort", summary="mx.sort (Sort): any axis, views, ties with equal cotangents",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    exact=True, mlx_call=".ops.repro.sort:mlx_call", call_expression=call_expression,
    primitives=("Sort", "Reshape"), dtypes=("float32", "float16", "bfloat16"), complex=True,
    scenarios=scenarios, strategy=fuzz_case,
    rule="y[p] = x[order[p]], each lane in ascending order; dx[order[p]] = g[p] "
         "(tied values only with equal cotangents)"),)
