"""cummax and cummin: mx.cummax / mx.cummin(a, axis, reverse=..., inclusive=...),
MLX's Scan primitive. Both records are declared here: cummin is the mirror
image, the same reference with the minimum and the same catalog with every
value negated, so the running minimum moves where the running maximum did.

Output i along the axis is the largest input j in S(i) (j <= i inclusive,
j < i exclusive, mirrored when reversed). Where the values in S(i) are
distinct, the output moves with exactly one input, its owner, so the reverse
rule routes g[i] to owner(i) and adds up every output's share. Scan::vjp
rebuilds the owner with a second running extreme over positions and a
scatter-add; for exclusive scans it slices input, output and cotangent to
length n - 1 and shifts them. Those shifts under each reverse/inclusive
combination are what the catalog covers.

Ties: where the extreme of S(i) is attained twice the output has no
derivative (MLX routes to the latest tied element in scan order, a
convention). The reference refuses to judge such a case
(ReferenceUndecided), and the generators keep the values of a lane apart by
at least 1 (the fuzzer by 4, so its direction test at step 0.5 x 3 never
reorders them).

Exclusive scans put the identity (-inf for max, +inf for min) at the first
position in scan order. The `trim` parameter drops that position (an
ordinary slice of MLX's output) so the forward is finite; the untrimmed
exclusive scenarios are kept apart in `nonfinite_scenarios()`. The MLX calls
are ops/repro/cummax.py (one function per op).

Complex input (complex64): the running maximum is in MLX's order,
lexicographic, real part first, then imaginary part (mlx/types/complex.h;
numpy's order too), and the reference uses it; the cotangent moves
unconjugated (a selection). Ties are exact equality of both parts, refused as
for real input; equal real parts are no tie (the imaginary part decides), and
the `convention/real_part_tie` scenarios sit there. cummin's catalog negates
the values, which reverses the lexicographic order as it does the real one.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.numeric import ReferenceUndecided, as_float64
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import tensor
from ._support.complex_parts import complex_twin
from ._support.views import draw_layout, with_imaginary

# layouts a complex operand never takes: a broadcast repeats values, which ties them
TIES = ("broadcast",)
from ._support.lanes import (SCAN_FLAGS, distinct_values, flag_name, from_lanes, lanes_to_input,
                             scan_flags, shape_and_axis, summed, to_lanes, with_layout)
from ._support import expression as E

# --- float64 reference (kind "max" or "min") ------------------------------------------------

IDENTITY = {"max": -np.inf, "min": np.inf}
IDENTITY_TEXT = {"max": "-inf", "min": "+inf"}


def _trimmed(params) -> bool:
    return bool(params.get("trim", False)) and not bool(params.get("inclusive", True))


def _kept(n, params) -> list:
    """Output positions the call returns: all, or all but the identity position."""
    _, rev, _ = scan_flags(params)
    if not _trimmed(params):
        return list(range(n))
    return list(range(n - 1)) if rev else list(range(1, n))


def owner(lane, positions, kind):
    """The one position in `positions` holding the extreme of `lane`; ties refuse."""
    vals = [lane[j] for j in positions]
    best = max(vals) if kind == "max" else min(vals)
    hits = [j for j, v in zip(positions, vals) if v == best]
    if len(hits) > 1:
        raise ReferenceUndecided(f"cum{kind}: the running {kind} {best} is attained at {hits}: "
                                 f"no derivative there")
    return hits[0]


def reference_of(kind):
    def reference(inp, params):
        axis, rev, inc = scan_flags(params)
        x = to_lanes(inp["a"], axis)
        n = x.shape[-1]
        y = np.full(x.shape, IDENTITY[kind], dtype=x.dtype)
        for i in range(n):
            positions = summed(i, n, rev, inc)
            if positions:
                y[..., i] = (np.max if kind == "max" else np.min)(x[..., positions], axis=-1)
        return from_lanes(y[..., _kept(n, params)], axis)
    return reference


def reference_vjp_of(kind):
    def reference_vjp(inp, g, params):
        """dx[owner(i)] += g[i] for every returned output i with a nonempty S(i)."""
        axis, rev, inc = scan_flags(params)
        x = to_lanes(inp["a"], axis)
        n = x.shape[-1]
        gm = to_lanes(g, axis)
        dx = np.zeros(x.shape, dtype=gm.dtype)   # complex128 for a complex cotangent
        for lane in np.ndindex(x.shape[:-1]):
            for q, i in enumerate(_kept(n, params)):
                positions = summed(i, n, rev, inc)
                if positions:
                    dx[lane + (owner(x[lane], positions, kind),)] += gm[lane + (q,)]
        return {"a": lanes_to_input(dx, np.shape(inp["a"]), axis)}
    return reference_vjp


# --- catalog (values for max; cummin negates them) ------------------------------------------

LANE = [1, 5, 2, 7, 3, -4]            # the running max moves forwards, the reverse one too
COT = [2, -1, 3, 1, -3, 4]
MATRIX = [[1, 5, 2, 7, 3], [9, 7, 5, 3, 1], [-2, 0, 4, 6, 8], [3, -1, 6, 2, 5]]
MATRIX_COT = [[1, 2, -1, 3, 2], [-2, 1, 4, 1, -1], [3, -3, 1, 2, 1], [1, 4, -2, -1, 3]]


def scan_params(axis, rev, inc, trim):
    p = {"axis": axis, "reverse": rev, "inclusive": inc}
    return dict(p, trim=True) if trim and not inc else p


def _out_cot(values, params):
    """The catalog cotangent cut to the returned positions."""
    axis = params["axis"]
    lanes = to_lanes(values, axis)
    dtype = "complex64" if np.iscomplexobj(lanes) else "float32"
    return tensor(from_lanes(lanes[..., _kept(lanes.shape[-1], params)], axis), dtype=dtype)


def case_maker(kind):
    sign = 1.0 if kind == "max" else -1.0

    def case(name, values, params, cot=None, views=(), desc=""):
        v = as_float64(values)
        a = tensor(sign * v, views=list(views), dtype="complex64" if np.iscomplexobj(v) else "float32")
        return Scenario(name=f"cum{kind}/{name}", op=f"cum{kind}", operands={"a": a}, wrt=("a",),
                        params=params, cotangent=None if cot is None else _out_cot(cot, params),
                        family="scan", description=desc)
    return case


def finite_scenarios(kind) -> list:
    """Every flag combination (exclusive ones trimmed), both axes, views, axis None."""
    case = case_maker(kind)
    m, mc = np.array(MATRIX, dtype=np.float64), np.array(MATRIX_COT, dtype=np.float64)
    out = [case(f"lane/{flag_name(rev, inc)}", LANE, scan_params(0, rev, inc, True), cot=COT)
           for rev, inc in SCAN_FLAGS]
    out += [case(f"matrix/axis{axis}/{flag_name(rev, inc)}", m if axis == 1 else m.T,
                 scan_params(axis, rev, inc, True), cot=mc if axis == 1 else mc.T)
            for axis in (1, 0) for rev, inc in SCAN_FLAGS]
    strided = np.full((3, 10), 50.0)
    strided[:, ::2] = np.array(MATRIX)[:3]
    out += [
        case("strided/reverse/exclusive", strided, scan_params(1, True, False, True),
             views=[{"op": "slice", "index": [[0, 3], [0, 10, 2]]}],
             desc="a stride-2 window; the skipped values (50, or -50 for cummin) would win"),
        case("transposed/axis0/forward", m.T, scan_params(0, False, True, True),
             views=[{"op": "transpose", "axes": [1, 0]}]),
        case("negative_axis/reverse/inclusive", m, scan_params(-1, True, True, True), cot=mc),
        case("flattened/axis_none/exclusive", m[:2], scan_params(None, False, False, True),
             cot=mc[:2].reshape(-1), desc="axis None scans the flattened array"),
        case("length1/inclusive", [[4], [-2]], scan_params(1, True, True, True)),
        case("length1/exclusive_trimmed", [[4], [-2]], scan_params(1, False, False, True),
             desc="nothing is left after the identity: an empty output, a zero gradient"),
    ]
    return out


def nonfinite_scenarios(kind) -> list:
    """NON-FINITE EXPECTED VALUES: untrimmed exclusive scans, whose first output in
    scan order is the identity (-inf for max, +inf for min). MLX must return that
    exact infinity and a finite gradient (the identity depends on no input). These
    fail the finite-observed comparison rule until non-finite expected values are
    compared exactly."""
    case = case_maker(kind)
    m, mc = np.array(MATRIX, dtype=np.float64), np.array(MATRIX_COT, dtype=np.float64)
    out = [case(f"nonfinite/lane/{flag_name(rev, False)}", LANE, scan_params(0, rev, False, False),
                cot=COT) for rev in (False, True)]
    out += [case(f"nonfinite/matrix/axis0/{flag_name(rev, False)}", m.T,
                 scan_params(0, rev, False, False), cot=mc.T) for rev in (False, True)]
    out.append(case("nonfinite/length1/exclusive", [[4], [-2]], scan_params(1, True, False, False)))
    return out


# distinct complex values whose real parts tie in runs: MLX's order (lexicographic) decides
REAL_TIE_LANE = [1 + 2j, 1 - 1j, 1 + 3j, 0 + 9j, 2 - 5j, 2 - 6j]
REAL_TIE_COT = [2 + 1j, -1 + 0j, 3 - 2j, 1 + 1j, -3 + 2j, 4 - 1j]


def complex_scenarios(kind) -> list:
    """complex64: twins of two plain scans (real parts distinct), then MLX's order where
    real parts tie (convention/real_part_tie), forward and reverse."""
    case = case_maker(kind)
    m, mc = np.array(MATRIX, dtype=np.float64), np.array(MATRIX_COT, dtype=np.float64)
    twins = [complex_twin(case("lane/forward/inclusive", LANE, scan_params(0, False, True, True), cot=COT), 80),
             complex_twin(case("matrix/axis0/reverse/exclusive", m.T, scan_params(0, True, False, True),
                               cot=mc.T), 81)]
    return twins + [case(f"convention/real_part_tie/{flag_name(rev, inc)}/complex64", REAL_TIE_LANE,
                         scan_params(0, rev, inc, True), cot=REAL_TIE_COT,
                         desc="equal real parts: the imaginary part orders them (lexicographic, as MLX)")
                    for rev, inc in ((False, True), (True, False))]


def scenarios_of(kind):
    return lambda: finite_scenarios(kind) + nonfinite_scenarios(kind) + complex_scenarios(kind)


# --- fuzz strategy -------------------------------------------------------------------------

def scan_shape_and_flags(draw):
    shape, axis = shape_and_axis(draw, lambda rank: tuple(range(rank)) + (-1, None))
    rev, inc = draw(D.choice((False, True))), draw(D.choice((True, False)))
    return shape, axis, rev, inc


def fuzz_case_of(kind):
    """Distinct values (no ties anywhere), exclusive scans trimmed (finite outputs)."""
    reference = reference_of(kind)

    def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
        dtype = draw(D.choice(dtypes))
        shape, axis, rev, inc = scan_shape_and_flags(draw)
        values = distinct_values(shape, draw(D.irange(0, 2**16)), axis)
        params = scan_params(axis, rev, inc, True)
        out_shape = reference({"a": values}, params).shape
        cot, mode = D.cotangent(draw, out_shape, dtype)
        # complex: distinct real parts (4 apart) keep the order; the imaginary parts ride along
        a = draw_layout(draw, with_imaginary(draw, values, dtype), dtype, exclude=TIES)[0] if dtype == "complex64" \
            else with_layout(draw, values, dtype)
        return D.finish(Scenario(name="", op=f"cum{kind}", operands={"a": a},
                                 wrt=("a",), cotangent=cot, params=params, family="scan",
                                 description=f"generated: axis {axis}, cotangent {mode}"))
    return fuzz_case


def call_expression_of(kind):
    """mx.cummax / mx.cummin with their flags; under params["trim"] an exclusive scan's first output
    in scan order (the identity) is dropped by a slice along the scanned axis."""
    def call_expression(params, names) -> str:
        axis, reverse = params.get("axis", 0), params.get("reverse", False)
        inclusive = params.get("inclusive", True)
        text = E.call(f"mx.cum{kind}", names["a"], axis=E.lit(axis), reverse=E.lit(reverse),
                      inclusive=E.lit(inclusive))
        if not params.get("trim", False) or inclusive:
            return text
        keep = ":-1" if reverse else "1:"
        if axis is None:        # the flattened scan
            return text + f"[{keep}]"
        if axis >= 0:
            return text + E.subscript([":"] * axis + [keep])
        return text + E.subscript(["..."] + [keep] + [":"] * (-axis - 1))
    return call_expression


def record(kind) -> OpInfo:
    return OpInfo(
        name=f"cum{kind}",
        summary=f"mx.cum{kind} (Scan): reverse and inclusive flags, distinct values (no ties)",
        operands=("a",), differentiable=("a",), reference=reference_of(kind),
        reference_vjp=reference_vjp_of(kind), exact=True, mlx_call=f".ops.repro.cummax:cum{kind}",
        primitives=("Scan", "Slice", "Reshape"), dtypes=("float32", "float16", "bfloat16"), complex=True,
        call_expression=call_expression_of(kind),
        scenarios=scenarios_of(kind), strategy=fuzz_case_of(kind),
        rule=f"y[i] = the {kind}imum of x[j] over the window S(i) (j <= i; j < i when exclusive; mirrored "
             f"when reversed; empty: {IDENTITY_TEXT[kind]}, dropped when trim); dx[j] = sum of g[i] over "
             f"the returned outputs i whose {kind}imum x[j] holds")


OPS = (record("max"), record("min"))
