"""partition: mx.partition(a, kth, axis), MLX's Partition primitive.

Each lane is rearranged so the entry at kth is the one a sort would put
there, smaller entries before it and larger after, in an unspecified order
within each side. Partition::vjp recomputes the arrangement with
argpartition and writes the cotangent back with put_along_axis, so it is
right only if argpartition reproduces the forward's exact order.

The unspecified order means the forward cannot be compared as returned: the
call (ops/repro/partition.py) puts each lane in ascending order (a
stop-gradient argsort and a gather), so the checked function is sort(a)
computed through Partition, for every kth (negative ones too), and the
reference is the canonical sorted lane of _support/sorting.py. A
Partition::vjp that routes a cotangent by any order other than the forward's
is caught, since the canonical gather sends each cotangent to the partition
output slot that held its value. Ties: equal cotangents on tied values only.

Complex input (complex64): MLX's lexicographic order (real part, then
imaginary part; _support/sorting.py), the cotangent moved unconjugated. Twins
of plain scenarios (distinct real parts); then lanes whose real parts tie,
kth inside such a block: `real_part_tie/value_cotangent` (one cotangent per
real part: differentiable) and `convention/real_part_tie` (different
cotangents: routed by MLX's order; not differentiable there, only the
reference and vmap oracles judge).
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import tensor
from ._support.complex_parts import complex_twin
from ._support.sorting import (M, M_COT, REAL_TIE, REAL_TIE_COT, draw_cotangent, draw_operand, draw_values,
                               lane_length, lane_shape_and_axis, reference, reference_vjp, value_cotangent)
from ._support import expression as E

# --- catalog: the reference is _support/sorting.py's --------------------------------------

def _case(name, a, params, cot=None, desc="", tags=()):
    cdt = "complex64" if np.iscomplexobj(cot) else "float32"
    return Scenario(name=f"partition/{name}", op="partition", operands={"a": a}, wrt=("a",),
                    params=params, cotangent=None if cot is None else tensor(cot, dtype=cdt), family="sort",
                    description=desc, defect_tags=tuple(tags))


def defect_scenarios() -> list:
    """tie_misroute (MLX 0.32.4 CPU): with tied values, argpartition (ties broken by
    index) arranges a lane differently from partition (values only), and
    Partition::vjp routes the cotangent by argpartition. An untied value then gets
    another slot's cotangent: for [0, 0, 1, 0] the 1 sits in output slot 2, but its
    gradient comes from slot 3. The cotangents are equal on the tied zeros, so the
    true gradient does not depend on any tie-break.

    broadcast_misroute (MLX 0.32.4 CPU, found by the transform oracles' round): on an
    input broadcast with stride 0 across lanes, partition and argpartition arrange a
    lane differently even without ties, so Partition::vjp's put_along_axis sends
    cotangents to the wrong elements."""
    return [
        _case("defect/tie_misroute/minimal", tensor([0, 0, 1, 0]), {"kth": 0, "axis": -1}, [1, 1, 1, 5],
              desc="the 1 must get 5; MLX gives it to the last 0", tags=("tie_misroute",)),
        _case("defect/tie_misroute/fuzz_seed1", tensor([0, -4, -8, 8, -4]), {"kth": 0, "axis": -1},
              [3, 4, 4, -4, -2], desc="found by the fuzzer: the 0 gets a -4's cotangent",
              tags=("tie_misroute",)),
        _case("defect/broadcast_misroute/rows", tensor([[3, 1, 2, 0, 5]], views=[{"op": "broadcast_to",
                                                                                "shape": [2, 5]}]),
              {"kth": 3, "axis": -1}, [[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]],
              desc="no ties; one row broadcast (stride 0) to two: partition gives [2, 0, 1, 3, 5] per row, "
                   "argpartition [2, 1, 3, 0, 4] (values 2, 1, 0, 3, 5): the 0 and the 1 swap cotangents",
              tags=("broadcast_misroute",)),
    ]


def scenarios() -> list:
    return scenarios_real() + complex_scenarios()


def complex_scenarios() -> list:
    """complex64: twins of plain scenarios (distinct real parts in every lane), then
    REAL_TIE's lanes (_support/sorting.py) with kth inside a block of equal real parts."""
    plain = {s.name: s for s in scenarios_real()}
    twins = [complex_twin(plain[f"partition/{n}"], seed) for n, seed in
             (("kth2/axis_last", 74), ("kth7/axis_none", 75), ("kth5/wide_lane", 76), ("kth1/transposed", 77))]
    tie = np.array(REAL_TIE)
    srt = np.sort(tie, axis=-1)   # numpy's complex order is MLX's for finite values
    cot = np.array(REAL_TIE_COT)
    return twins + [
        _case("real_part_tie/value_cotangent/complex64", tensor(tie, dtype="complex64"), {"kth": 2, "axis": -1},
              value_cotangent(srt), desc="equal real parts, the imaginary part orders them (MLX's lexicographic "
                                         "order); one cotangent per real part: differentiable"),
        _case("real_part_tie/value_cotangent/axis0/complex64", tensor(tie.T, dtype="complex64"),
              {"kth": -3, "axis": 0}, value_cotangent(srt.T, 4), desc="the same lanes along axis 0 (strided lanes)"),
        _case("convention/real_part_tie/kth2/complex64", tensor(tie[:2], dtype="complex64"), {"kth": 2, "axis": -1},
              cot, desc="kth inside a block of equal real parts; different cotangents: routed by MLX's order "
                        "(not differentiable there)"),
        _case("convention/real_part_tie/kth_minus2/complex64", tensor(tie[:2], dtype="complex64"),
              {"kth": -2, "axis": -1}, cot, desc="kth -2: the partition point between two equal real parts"),
    ]


def scenarios_real() -> list:
    m, mc = np.array(M, dtype=np.float64), np.array(M_COT, dtype=np.float64)
    wide = np.array([[13, -2, 7, 21, 0, 9, -8, 4, 16, 1, -5]], dtype=np.float64)
    wide_cot = np.arange(11, dtype=np.float64)[None] % 7 - 3
    ties = np.array([[2, 5, 2, -1, 5], [3, 3, 3, 3, 3], [0, 1, 0, 1, 0]], dtype=np.float64)
    strided = np.full((3, 10), 50.0)
    strided[:, ::2] = m
    out = [_case(f"kth{kth}/axis_last", tensor(m), {"kth": kth, "axis": -1}, mc) for kth in (0, 2, 4, -1, -4)]
    out += [
        _case("kth1/axis0", tensor(m), {"kth": 1, "axis": 0}, mc),
        _case("kth3/axis_minus2", tensor(m.T), {"kth": 3, "axis": -2}, mc.T),
        _case("kth7/axis_none", tensor(m), {"kth": 7, "axis": None}, mc.reshape(-1)),
        _case("kth5/wide_lane", tensor(wide), {"kth": 5, "axis": -1}, wide_cot,
              desc="a lane of 11: both sides hold several unordered entries"),
        _case("kth2/strided", tensor(strided, views=[{"op": "slice", "index": [[0, 3], [0, 10, 2]]}]),
              {"kth": 2, "axis": -1}, mc, desc="a stride-2 window; the skipped values are 50"),
        _case("kth1/transposed", tensor(m.T, views=[{"op": "transpose", "axes": [1, 0]}]),
              {"kth": 1, "axis": -1}, mc),
        _case("kth2/ties", tensor(ties), {"kth": 2, "axis": -1}, value_cotangent(np.sort(ties, axis=-1)),
              desc="tied values (across kth too) with equal cotangents"),
    ]
    return out + defect_scenarios()


# --- fuzz strategy -------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    shape, axis = lane_shape_and_axis(draw)
    n = lane_length(shape, axis)
    kth = draw(D.irange(0, n - 1)) - (n if draw(D.choice((False, True))) else 0)
    values, mode = draw_values(draw, shape, axis, dtype)
    params = {"kth": kth, "axis": axis}
    y = reference({"a": values}, params)
    cot, cmode = draw_cotangent(draw, y, 1.0, mode, dtype)
    return D.finish(Scenario(name="", op="partition", operands={"a": draw_operand(draw, values, dtype)},
                             wrt=("a",), cotangent=cot, params=params, family="sort",
                             description=f"generated: kth {kth}, axis {axis}, {mode} values, cotangent {cmode}"))


def call_expression(params, names) -> str:
    """mx.partition, each lane then put in ascending order by a gather at the stop-gradient argsort."""
    axis = params.get("axis", -1)
    ax = E.lit(0 if axis is None else axis)
    first = E.call("mx.partition", names["a"], E.lit(params["kth"]), axis=E.lit(axis))
    return E.call("mx.take_along_axis", f"part := {first}", f"mx.argsort(mx.stop_gradient(part), axis={ax})",
                  axis=ax)


OPS = (OpInfo(
    name="partition", known_defects=(KnownDefect("tie_misroute"), KnownDefect("broadcast_misroute")),
    summary="mx.partition (Partition): every kth, negative kth, any axis, ties",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    exact=True, mlx_call=".ops.repro.partition:mlx_call", call_expression=call_expression,
    primitives=("Partition", "GatherAxis", "Reshape"), dtypes=("float32", "float16", "bfloat16"), complex=True,
    scenarios=scenarios, strategy=fuzz_case,
    rule="y[p] = x[order[p]], the partitioned lane put in ascending order; dx[order[p]] = g[p] "
         "(tied values only with equal cotangents)"),)
