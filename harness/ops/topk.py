"""topk: mx.topk(a, k, axis), the k largest entries of each lane.

MLX builds it from Partition (kth = -k) and a slice, and returns the whole
input unchanged when k equals the lane length; its gradient is
Partition::vjp (put_along_axis by argpartition) behind a slice's.

The order of topk's output is unspecified, so the call (ops/repro/topk.py)
puts each lane in ascending order (a stop-gradient argsort and a gather) and
the reference is the k largest entries, ascending (_support/sorting.py).
The gradient routes each output's cotangent to the input that holds it;
unselected inputs get exactly 0. Ties: inside the selected set or inside the
rest with equal cotangents only; a tie across the boundary only with zero
cotangent on the boundary value (otherwise the reference refuses to judge).

Complex input (complex64): the k largest in MLX's lexicographic order (real
part, then imaginary part; _support/sorting.py), the cotangent moved
unconjugated. Twins of plain scenarios (distinct real parts); then lanes whose
real parts tie: `real_part_tie/value_cotangent` (one cotangent per real part,
zero on a block of equal real parts the selection cuts: differentiable) and
`convention/real_part_tie` (the selection cuts such a block, and the cotangents
differ: the imaginary part decides which member is returned, and MLX's VJP
routes by that choice; not differentiable there, only the reference and vmap
oracles judge).
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import tensor
from ._support.complex_parts import complex_twin
from ._support.sorting import (M, M_COT, REAL_TIE, REAL_TIE_COT, draw_cotangent, draw_operand, draw_values,
                               lane_length, lane_shape_and_axis, sort_axis, sorted_tail, sorted_tail_vjp,
                               value_cotangent)
from ._support import expression as E


# --- float64 reference: the sorted lane's last k entries ----------------------------------

def _k(params) -> int:
    return int(params["k"])


def reference(inp, params):
    return sorted_tail(inp["a"], sort_axis(params), _k(params))


def reference_vjp(inp, g, params):
    return {"a": sorted_tail_vjp(inp["a"], g, sort_axis(params), _k(params), "topk")}


# --- catalog ---------------------------------------------------------------------------------

def _case(name, a, params, cot=None, desc="", tags=()):
    cdt = "complex64" if np.iscomplexobj(cot) else "float32"
    return Scenario(name=f"topk/{name}", op="topk", operands={"a": a}, wrt=("a",), params=params,
                    cotangent=None if cot is None else tensor(cot, dtype=cdt), family="sort", description=desc,
                    defect_tags=tuple(tags))


def defect_scenarios() -> list:
    """tie_misroute (MLX 0.32.4 CPU), inherited from Partition::vjp (see
    partition.py): topk(a, k) is partition(a, -k) and a slice, and with tied values
    the VJP's argpartition arrangement is not the forward's. The cut block of tied
    zeros has zero cotangent, so the true gradient does not depend on a tie-break."""
    return [
        _case("defect/tie_misroute/minimal", tensor([0, 0, 1, 0]), {"k": 3, "axis": -1}, [0, 0, 5],
              desc="the maximum 1 must get 5; MLX gives it to the last 0", tags=("tie_misroute",)),
        _case("defect/tie_misroute/fuzz_seed1", tensor([[8, 0, 4, 0], [8, 0, -4, 8]]), {"k": 6, "axis": None},
              [0, 0, -3, -2, -2, -2], desc="found by the fuzzer: the 4's cotangent goes to an 8",
              tags=("tie_misroute",)),
    ]


def boundary_safe(y_full_sorted, k) -> np.ndarray:
    """1 on the returned (last k) sorted positions, 0 where their value also sits just
    below the boundary: such a tied block is cut, and only zero cotangent is judged.
    Complex: where their real part does (a block of equal real parts the selection cuts
    is not differentiable either, _support/sorting.py)."""
    v = np.real(np.asarray(y_full_sorted)).astype(np.float64)
    n = v.shape[-1]
    ok = np.ones(v.shape[:-1] + (k,))
    if 0 < k < n:
        ok = np.where(v[..., n - k:] == v[..., n - k - 1:n - k], 0.0, 1.0)
    return ok


def scenarios() -> list:
    return scenarios_real() + complex_scenarios()


def complex_scenarios() -> list:
    """complex64: twins of plain scenarios (distinct real parts in every lane), then
    REAL_TIE's lanes (_support/sorting.py) with k = 3, which cuts a block of equal real
    parts in the first two rows and keeps a block with an exact tie whole in the third."""
    plain = {s.name: s for s in scenarios_real()}
    twins = [complex_twin(plain[f"topk/{n}"], seed) for n, seed in
             (("k2/axis_last", 70), ("k3/axis_none", 71), ("k3/strided", 72), ("k_full/early_return", 73))]
    tie = np.array(REAL_TIE)
    srt = np.sort(tie, axis=-1)   # numpy's complex order is MLX's for finite values
    cot = value_cotangent(srt[:, 3:]) * boundary_safe(srt, 3)
    return twins + [
        _case("real_part_tie/value_cotangent/complex64", tensor(tie, dtype="complex64"), {"k": 3, "axis": -1}, cot,
              desc="equal real parts, the imaginary part orders them (MLX's lexicographic order); one cotangent per "
                   "real part, zero on the block the selection cuts: differentiable"),
        _case("real_part_tie/value_cotangent/axis0/complex64", tensor(tie.T, dtype="complex64"),
              {"k": 3, "axis": 0}, cot.T, desc="the same lanes along axis 0 (strided lanes)"),
        _case("convention/real_part_tie/complex64", tensor(tie[:2], dtype="complex64"), {"k": 3, "axis": -1},
              np.array(REAL_TIE_COT)[:, 3:], desc="k = 3 cuts a block of equal real parts; different cotangents: "
              "the imaginary part picks the returned member and MLX routes by it (not differentiable there)"),
    ]


def scenarios_real() -> list:
    m, mc = np.array(M, dtype=np.float64), np.array(M_COT, dtype=np.float64)
    ties = np.array([[2, 5, 5, -1, 0], [1, 1, 7, 1, 1], [4, 0, 4, 0, 4]], dtype=np.float64)
    cut = np.array([[6, 2, 6, 6, -3]], dtype=np.float64)   # top-2 cuts the block of three 6s
    strided = np.full((3, 10), 50.0)
    strided[:, ::2] = m
    return [
        _case("k2/axis_last", tensor(m), {"k": 2, "axis": -1}, mc[:, :2]),
        _case("k1/axis_last", tensor(m), {"k": 1, "axis": -1}, mc[:, :1], desc="the maximum only"),
        _case("k2/axis0", tensor(m.T), {"k": 2, "axis": 0}, mc[:, :2].T),
        _case("k2/axis_minus2", tensor(m.T), {"k": 2, "axis": -2}, mc[:, :2].T),
        _case("k3/axis_none", tensor(m), {"k": 3, "axis": None}, [2, -1, 3], desc="the flattened array"),
        _case("k_full/early_return", tensor(m), {"k": 5, "axis": -1}, mc,
              desc="k equal to the lane length: MLX returns the input itself"),
        _case("k0/empty", tensor(m), {"k": 0, "axis": -1}, desc="nothing selected: a zero gradient"),
        _case("k3/strided", tensor(strided, views=[{"op": "slice", "index": [[0, 3], [0, 10, 2]]}]),
              {"k": 3, "axis": -1}, mc[:, :3], desc="a stride-2 window; the skipped 50s would win"),
        _case("k2/transposed", tensor(m.T, views=[{"op": "transpose", "axes": [1, 0]}]),
              {"k": 2, "axis": -1}, mc[:, :2]),
        _case("ties/inside", tensor(ties), {"k": 3, "axis": -1},
              value_cotangent(np.sort(ties, axis=-1)[:, 2:]) * boundary_safe(np.sort(ties, axis=-1), 3),
              desc="tied values with equal cotangents; row 2 cuts a block of 1s (zero cotangent there)"),
        _case("ties/cut_block_zero_cotangent", tensor(cut), {"k": 2, "axis": -1}, [[0, 0]],
              desc="the selection cuts a tied block: only a zero cotangent there is judged"),
        _case("ties/cut_block_below", tensor(cut), {"k": 3, "axis": -1}, [[2, 2, 2]],
              desc="all three tied 6s selected, equal cotangents"),
    ] + defect_scenarios()


# --- fuzz strategy -------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    shape, axis = lane_shape_and_axis(draw)
    n = lane_length(shape, axis)
    k = draw(D.irange(1, n))
    values, mode = draw_values(draw, shape, axis, dtype)
    params = {"k": k, "axis": axis}
    lanes_full = np.sort(values.reshape(-1) if axis is None else np.moveaxis(values, axis, -1), axis=-1)
    ok = boundary_safe(lanes_full, k)
    ok = ok.reshape(-1) if axis is None else np.moveaxis(ok, -1, axis)
    y = reference({"a": values}, params)
    cot, cmode = draw_cotangent(draw, y, ok, mode, dtype)
    return D.finish(Scenario(name="", op="topk", operands={"a": draw_operand(draw, values, dtype)},
                             wrt=("a",), cotangent=cot, params=params, family="sort",
                             description=f"generated: k {k}, axis {axis}, {mode} values, cotangent {cmode}"))


def call_expression(params, names) -> str:
    """mx.topk, each lane then put in ascending order by a gather at the stop-gradient argsort."""
    axis = params.get("axis", -1)
    ax = E.lit(0 if axis is None else axis)
    first = E.call("mx.topk", names["a"], E.lit(params["k"]), axis=E.lit(axis))
    return E.call("mx.take_along_axis", f"top := {first}", f"mx.argsort(mx.stop_gradient(top), axis={ax})",
                  axis=ax)


OPS = (OpInfo(
    name="topk", known_defects=(KnownDefect("tie_misroute"),),
    summary="mx.topk (Partition + slice): k from 0 to the lane length, any axis, ties",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    exact=True, mlx_call=".ops.repro.topk:mlx_call", call_expression=call_expression,
    primitives=("Partition", "Slice", "GatherAxis", "Reshape"), dtypes=("float32", "float16", "bfloat16"), complex=True,
    scenarios=scenarios, strategy=fuzz_case,
    rule="y = the k largest entries of each lane, in ascending order; dx[j] = the cotangent of the "
         "output holding x[j], 0 where x[j] is not selected (tied values only with equal cotangents)"),)
