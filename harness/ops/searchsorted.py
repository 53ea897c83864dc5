"""searchsorted: mx.searchsorted(s, v, side), MLX's SearchSorted primitive: for a
sorted 1-D s, the insertion point of each value of v (side "left": the number of
elements of s below it; "right": at or below it). An integer output, so its VJP
is zeros for both operands; judged in the two forms of _support/indices.py:
the indices themselves, and v * the indices (d v = g * the indices, d s = 0).

A value equal to an element of s is where the index jumps; the side decides
which index MLX (and numpy) returns, and the weighted form holds it fixed (the
".../convention/..." scenarios). The MLX call is ops/repro/searchsorted.py.

Complex input (complex64): MLX documents no order; 0.32.4 searches in the
lexicographic order (real part, then imaginary part), numpy's, so the
reference is unchanged. Rows with real parts of v unequal to s's are smooth;
where a real part equals one of s's the imaginary part places the value and
a real perturbation moves the index (".../convention/real_part_tie/...").
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ._support import expression as E
from ._support import indices as I
from ._support.cases import case, in_half_precision, logical_inputs
from ._support.views import draw_layout, draw_shape, laid_out

OP = "searchsorted"


def index(inp, params):
    return np.searchsorted(np.asarray(inp["s"]), np.asarray(inp["v"]), side=params.get("side", "left"))


reference, reference_vjp = I.forward(index, "v"), I.vjp(index, "v")

S = np.array([-3.0, -1.0, 0.0, 2.0, 2.0, 5.0])
V = np.array([[-4.0, 1.0, 6.0], [0.5, 3.0, -1.5]])   # no value equals an element of S
HITS = np.array([-1.0, 2.0, 5.0, -3.0])              # every value is in S (2 twice)

# (name, s (values, layout), v (values, layout), params, wrt, description)
ROWS = (
    ("left", (S, "contiguous"), (V, "contiguous"), {"side": "left"}, None, ""),
    ("right", (S, "contiguous"), (V, "transposed"), {"side": "right"}, None, ""),
    ("rank0_value", (S, "strided"), (np.array(1.5), "contiguous"), {}, None, "a 0-d v"),
    ("empty_sequence", (np.zeros(0), "contiguous"), (V, "contiguous"), {}, ("v",), "every index 0"),
    ("zero_size_values", (S, "contiguous"), (np.zeros((0, 2)), "contiguous"), {}, None, ""),
    ("reversed_views", (S, "reversed"), (V, "reversed"), {"side": "right"}, None, "negative strides"),
    ("convention/hits_left", (S, "contiguous"), (HITS, "contiguous"), {"side": "left"}, None,
     "values equal to elements of s: the first insertion point"),
    ("convention/hits_right", (S, "contiguous"), (HITS, "contiguous"), {"side": "right"}, None,
     "values equal to elements of s: the last insertion point"),
    ("weighted/left", (S, "contiguous"), (V, "contiguous"), {"side": "left", "form": "weighted"}, None, ""),
    ("weighted/right_broadcast", (S, "window"), (np.tile(V[:1], (3, 1)), "broadcast"),
     {"side": "right", "form": "weighted"}, None, "v stored as one row with a stride-0 axis"),
    ("weighted/convention/hits", (S, "contiguous"), (HITS, "contiguous"), {"side": "left", "form": "weighted"},
     None, "the index held fixed where it jumps: d v = g * index"),
)


# complex64 (MLX's order on complex values is lexicographic, numpy's: pinned in
# tests/ops/test_searchsorted.py): s sorted that way, with equal real parts and an exact tie;
# V_C's real parts equal none of s's (the indices are locally constant); HITS_C's real parts
# are s's, the imaginary part placing each value (-0.0 and 0.0 are equal real parts), where
# a real perturbation moves the index: conventions, as the real hits are
S_C = np.array([-3 + 1j, -1 + 0j, 0 - 1j, 0 + 2j, 2 + 0j, 2 + 0j, 5 - 3j])
V_C = np.array([[-4 + 1j, 1 - 2j, 6 + 0j], [0.5 + 3j, 3 - 1j, -1.5 + 2j]])
HITS_C = np.array([0 + 0j, 0 + 3j, 0 - 2j, 2 - 1j, 2 + 1j, complex(-0.0, 2.0), 2 + 0j])
COMPLEX_ROWS = (
    ("left/complex64", (S_C, "contiguous"), (V_C, "contiguous"), {"side": "left"}, None, ""),
    ("right/complex64", (S_C, "strided"), (V_C, "transposed"), {"side": "right"}, None, ""),
    ("weighted/left/complex64", (S_C, "contiguous"), (V_C, "reversed"), {"side": "left", "form": "weighted"},
     None, "d v = g * index, unconjugated (the index is real)"),
    ("convention/real_part_tie/complex64", (S_C, "contiguous"), (HITS_C, "contiguous"), {"side": "left"}, None,
     "real parts equal to s's: the imaginary part places the value (MLX's lexicographic order)"),
    ("weighted/convention/real_part_tie/complex64", (S_C, "contiguous"), (HITS_C, "contiguous"),
     {"side": "right", "form": "weighted"}, None, "the index held fixed where it jumps: d v = g * index"),
)


def scenarios() -> list:
    out = []
    for k, (name, (s, ls), (v, lv), params, wrt, desc) in enumerate(ROWS):
        ops = {"s": laid_out(s, ls)[0], "v": laid_out(v, lv)[0]}
        out.append(case(OP, name, ops, params, reference=reference, wrt=wrt, seed=k, family="search", desc=desc,
                        fd=k == 8))
    cx = []
    for k, (name, (s, ls), (v, lv), params, wrt, desc) in enumerate(COMPLEX_ROWS, start=40):
        ops = {"s": laid_out(s, ls, "complex64")[0], "v": laid_out(v, lv, "complex64")[0]}
        cx.append(case(OP, name, ops, params, reference=reference, wrt=wrt, seed=k, family="search", desc=desc))
    return out + in_half_precision(out, picks=1) + in_half_precision(out[8:], picks=1) + cx


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(tuple(dtypes)))
    n = draw(D.irange(0, 6))
    s = np.sort(D.hashed_ints((n,), draw(D.irange(0, 2**16))))
    shape = draw_shape(draw, 0, 2, 3)
    v = D.hashed_ints(shape, draw(D.irange(0, 2**16)), -5, 6) + draw(D.choice((0.0, 0.5)))
    if dtype == "complex64":   # imaginary parts; s stays sorted lexicographically (np.sort's complex order)
        s = np.sort(s + 1j * D.hashed_ints((n,), draw(D.irange(0, 2**16)), -2, 3))
        v = v + 1j * D.hashed_ints(shape, draw(D.irange(0, 2**16)), -2, 3)
    params = {"side": draw(D.choice(("left", "right"))), "form": draw(D.choice(I.FORMS))}
    ops = {"s": draw_layout(draw, s, dtype)[0], "v": draw_layout(draw, v, dtype)[0]}
    y = reference(logical_inputs(ops), params)
    cot, mode = D.cotangent(draw, np.shape(y), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("s", "v")))))
    return D.finish(Scenario(name="", op=OP, operands=ops, wrt=wrt, params=params, cotangent=cot, family="search",
                             description=f"generated: s({n},) v{shape} {params}, cotangent {mode}"))


def call_expression(params, names) -> str:
    call = E.call("mx.searchsorted", names["s"], names["v"], side=E.lit(params.get("side", "left")))
    return I.expression(call, params, names, "v")


OPS = (OpInfo(
    name=OP, summary="mx.searchsorted (SearchSorted): both sides, hits, empty s, its indices and v * indices",
    operands=("s", "v"), differentiable=("s", "v"), reference=reference, reference_vjp=reference_vjp, exact=True,
    mlx_call=".ops.repro.searchsorted:mlx_call", call_expression=call_expression,
    primitives=("SearchSorted", "AsType", "Multiply"), dtypes=("float32", "float16", "bfloat16"), complex=True,
    scenarios=scenarios, strategy=fuzz_case,
    rule="integer output: d s = d v = 0 through the indices; weighted v * idx: d v = g * idx (idx held fixed)"),)
