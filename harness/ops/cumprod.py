"""cumprod: mx.cumprod(a, axis, reverse=..., inclusive=...), MLX's Scan primitive.

Output i along the axis is the product of the inputs j in S(i) (j <= i
inclusive, j < i exclusive, mirrored when reversed; an empty product is 1).
Its derivative is, for every output i that multiplied position j,
dx[j] += g[i] * prod_{k in S(i), k != j} x[k]: the product of the other
factors, never a division.

Scan::vjp instead divides a reverse cumsum of g * y by x and patches the
zeros: it finds the first zero in scan order, redoes the product with that
zero set to 1 for its own gradient, and zeroes everything after it. Zeros
are therefore where this rule can go wrong: one, two, adjacent, at either
end, negative zero, and a zero under each flag combination. The MLX call is
ops/repro/cumprod.py.

Known defects of MLX 0.32.4, tagged by rule (`has_zero`, `is_complex`):
  zero_second_order  the first-order VJP is right, but its own VJP (second order) is
          NaN wherever a lane holds a zero: the division by x that the first order
          patches with a select still sits in the graph, and its derivative at x = 0 is
          0 * inf (every zero-bearing float32 scenario; the second-order oracle runs
          in float32);
  complex_scan_conjugate  complex input: Scan::vjp multiplies g by the product of the
          other factors without conjugating it (MLX's convention, and prod's own VJP,
          conjugate: d z_j = g conj(prod of the others)).
"""
from __future__ import annotations


import numpy as np

from ..core import draw as D
from ..core import layout
from ..core.opinfo import KnownDefect, OpInfo, tag_by_rules
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints, tensor
from ._support.lanes import SCAN_FLAGS, flag_name, from_lanes, lanes_to_input, scan_flags, summed, to_lanes
from ._support import expression as E

# --- float64 reference: lanes and windows in _support/lanes.py ----------------------------

def _lanes(x, axis) -> np.ndarray:
    """to_lanes, keeping a complex operand complex (complex128)."""
    x = np.asarray(x)
    return to_lanes(x, axis) if not np.iscomplexobj(x) else \
        (x.astype(np.complex128).reshape(-1) if axis is None else np.moveaxis(x.astype(np.complex128), axis, -1))



def reference(inp, params):
    axis, rev, inc = scan_flags(params)
    x = _lanes(inp["a"], axis)
    n = x.shape[-1]
    y = np.ones(x.shape, dtype=x.dtype if np.iscomplexobj(x) else np.float64)
    for i in range(n):
        for j in summed(i, n, rev, inc):
            y[..., i] *= x[..., j]
    return from_lanes(y, axis)


def reference_vjp(inp, g, params):
    """dx[j] = sum over outputs i that multiplied j of g[i] * conj(the other factors of y[i])."""
    axis, rev, inc = scan_flags(params)
    x = _lanes(inp["a"], axis)
    gm = _lanes(g, axis)
    n = x.shape[-1]
    dx = np.zeros(x.shape, dtype=np.result_type(x, gm, np.float64))
    for i in range(n):
        factors = summed(i, n, rev, inc)
        for j in factors:
            others = np.ones(x.shape[:-1], dtype=dx.dtype)
            for k in factors:
                if k != j:
                    others = others * x[..., k]
            dx[..., j] += gm[..., i] * np.conj(others)
    return {"a": lanes_to_input(dx, np.shape(inp["a"]), axis)}


# --- catalog ---------------------------------------------------------------------------------

# Length-5 lanes; the cotangent is nonzero everywhere so every zero's gradient matters.
ZERO_PATTERNS = {
    "no_zero": [2, -1, 3, 1, -2],
    "one_zero": [2, 0, 3, -1, 2],
    "two_zeros": [2, 0, 3, 0, -1],
    "adjacent_zeros": [2, 0, 0, 3, 1],
    "zero_first": [0, 2, -1, 3, 2],
    "zero_last": [2, -1, 3, 2, 0],
    "zeros_both_ends": [0, 2, 3, -1, 0],
    "negative_zero": [2, -0.0, 3, -1, 2],
    "all_zeros": [0, 0, 0, 0, 0],
}
COT5 = [3, -2, 1, 4, -1]


def _case(name, a, params, cot=None, desc=""):
    return Scenario(name=f"cumprod/{name}", op="cumprod", operands={"a": a}, wrt=("a",),
                    params=params, cotangent=cot, family="scan", description=desc)


def _params(axis, rev, inc):
    return {"axis": axis, "reverse": rev, "inclusive": inc}


def zero_scenarios() -> list:
    """Every zero pattern under every flag combination, one lane each."""
    return [_case(f"{pat}/{flag_name(rev, inc)}", tensor(vals), _params(0, rev, inc),
                  cot=tensor(COT5), desc=f"lane {vals}")
            for pat, vals in ZERO_PATTERNS.items() for rev, inc in SCAN_FLAGS]


def layout_scenarios() -> list:
    """Zeros in different lanes of a matrix, scanned along axis 0 and 1, and views."""
    rows = np.array([ZERO_PATTERNS[k] for k in ("one_zero", "zero_last", "no_zero", "zero_first")],
                    dtype=np.float64)
    cot = seeded_ints(rows.shape, 70, 1, 4) * np.where(np.arange(20).reshape(4, 5) % 3, 1, -1)
    out = [_case(f"matrix/axis{axis}/{flag_name(rev, inc)}",
                 tensor(rows if axis == 1 else rows.T), _params(axis, rev, inc),
                 cot=tensor(cot if axis == 1 else cot.T))
           for axis in (1, 0) for rev, inc in SCAN_FLAGS]
    strided = np.full((3, 8), 50.0)
    strided[:, ::2] = [[2, 0, 3, 1], [0, 1, 2, -1], [1, 2, 0, 0]]
    out += [
        _case("strided/reverse/exclusive", tensor(strided, views=[{"op": "slice", "index": [[0, 3], [0, 8, 2]]}]),
              _params(1, True, False), desc="a stride-2 window; the skipped values are 50"),
        _case("transposed/axis0/reverse", tensor(rows[:, :4], views=[{"op": "transpose", "axes": [1, 0]}]),
              _params(0, True, True)),
        _case("negative_axis/exclusive", tensor(rows), _params(-1, False, False), cot=tensor(cot)),
        _case("flattened/axis_none", tensor([[2, 1, 0], [3, -1, 2]]), {"axis": None, "reverse": True,
                                                                        "inclusive": True},
              cot=tensor([1, 2, -1, 3, 1, -2]), desc="axis None scans the flattened array"),
        _case("length1/exclusive", tensor([[0], [3]]), _params(1, False, False),
              desc="an exclusive product of length 1 is all ones; its gradient is zero"),
        _case("length1/inclusive_zero", tensor([[0], [3]]), _params(1, True, True)),
    ]
    return out


def complex_scenarios() -> list:
    z = np.array([1 + 2j, 2 - 1j, -1 + 1j, 1 - 2j])
    return [_case("complex/forward/inclusive", tensor(z, dtype="complex64"), _params(0, False, True),
                  cot=tensor(np.array([1 - 1j, 2 + 0j, -1 + 2j, 1 + 1j]), dtype="complex64"),
                  desc="no zero: d z_j = sum of g_i conj(the other factors)")]


def scenarios() -> list:
    return [tag_by_rules(s, DEFECTS) for s in zero_scenarios() + layout_scenarios() + complex_scenarios()]


ZERO_SECOND_ORDER, COMPLEX = "zero_second_order", "complex_scan_conjugate"


def has_zero(s: Scenario) -> bool:
    """ZERO_SECOND_ORDER's rule: a float32 operand with a zero (where second order runs)."""
    a = s.operands["a"]
    return a.dtype == "float32" and bool(np.any(layout.logical(a) == 0))


def is_complex(s: Scenario) -> bool:
    return s.operands["a"].dtype == "complex64"


# The classes its operand meets (module text), tagged by these rules.
DEFECTS = (KnownDefect(ZERO_SECOND_ORDER, revealed_by="second_order", rule=has_zero),
           KnownDefect(COMPLEX, rule=is_complex))


# --- fuzz strategy -------------------------------------------------------------------------

# Value ranges per dtype, widest first: every product, and every partial sum of
# g * y that Scan::vjp forms (lane length <= 6, |g| <= 5), stays an integer the
# dtype holds exactly (float16: 2048, bfloat16: 256), so a mismatch is never rounding.
RANGES = {"float32": ((-3, 4), (-1, 2)), "float16": ((-2, 3), (-1, 2)), "bfloat16": ((-1, 2),)}


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    """Values in -3..3, or -1..1 where a third of them are zero (many zeros per lane).
    Axis None flattens at most 6 elements, so no lane is longer than 6."""
    dtype = draw(D.choice(dtypes))
    rank = draw(D.irange(1, 3))
    axis = draw(D.choice(tuple(range(rank)) + (-1, None)))
    shape = tuple(draw(D.irange(1, 5)) for _ in range(rank)) if axis is not None else \
        (draw(D.irange(1, 2)), draw(D.irange(1, 3)))
    lo, hi = draw(D.choice(RANGES.get(dtype, RANGES["bfloat16"])))
    seed = draw(D.irange(0, 2**16))
    a = D.layout(draw, shape[:-2], shape[-2:], seed, dtype, lo, hi) if len(shape) >= 2 else \
        D.tensor(D.hashed_ints(shape, seed, lo, hi), dtype=dtype)
    if dtype == "complex64":   # an imaginary part, so that a missing conjugate shows
        a = D.tensor(D.hashed_ints(shape, seed, lo, hi) + 1j * D.hashed_ints(shape, seed + 1, lo, hi), dtype=dtype)
    out_shape = (int(np.prod(shape)),) if axis is None else shape
    cot, mode = D.cotangent(draw, out_shape, dtype)
    rev, inc = draw(D.choice((False, True))), draw(D.choice((True, False)))
    return D.finish(Scenario(name="", op="cumprod", operands={"a": a}, wrt=("a",), cotangent=cot,
                             params=_params(axis, rev, inc), family="scan",
                             description=f"generated: axis {axis}, values {lo}..{hi - 1}, cotangent {mode}"))


def call_expression(params, names) -> str:
    return E.call("mx.cumprod", names["a"], axis=E.lit(params.get("axis", 0)),
                  reverse=E.lit(params.get("reverse", False)), inclusive=E.lit(params.get("inclusive", True)))


OPS = (OpInfo(
    name="cumprod", known_defects=DEFECTS,
    summary="mx.cumprod (Scan): reverse and inclusive flags, zeros anywhere in a lane",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    exact=True, mlx_call=".ops.repro.cumprod:mlx_call", call_expression=call_expression,
    primitives=("Scan", "Flatten"), dtypes=("float32", "float16", "bfloat16"), complex=True,
    scenarios=scenarios, strategy=fuzz_case,
    rule="y[i] = product of x[j] over the window S(i) (j <= i; j < i when exclusive; mirrored when "
         "reversed; empty: 1); dx[j] = sum over outputs i whose window holds j of g[i] times the "
         "product of the other factors (never a division)"),)
