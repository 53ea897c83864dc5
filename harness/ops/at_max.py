"""at_max and at_min: `a.at[key].maximum(v)` / `.minimum(v)`, MLX's Scatter (reduce
Max / Min) for index-array keys and SliceUpdate (reduce Max / Min) for int/slice
keys. One module, two records (at_min after at_max); the MLX calls are
ops/repro/at_max.py, the scatter machinery _support/scatter.py.

Forms, update modes and `negative` as in at_set: rows, cols, points (Scatter) and
slice (SliceUpdate: ints and [start, stop, step] with steps of either sign);
per-occurrence, shared (one value per distinct target, via mx.take) and broadcast
updates.

What is claimed (at_min: the same with the minimum, the unique smallest input
winning): out[t] = max(a[t], every v written to t) is differentiable where
the maximum over the DISTINCT inputs competing for t is unique; the cotangent then
goes to the winner (a[t], or the one element of v that won, once however many
writes carried it). At a tie between distinct inputs there is no derivative: the
reference marks it NaN, and no scenario or generated case has one (all values are
distinct multiples of 4, so even the fuzzer's finite-difference steps of up to 1.5
per coordinate never reorder them). A tie between copies of ONE element (shared or
broadcast updates writing a position twice) is not a tie: the output is
max(a[t], v[s]) whatever the copies, a smooth function of v[s] away from a[t].

Two defects of MLX's Scatter::vjp on 0.32.4 (tagged, expected to fail):
* tied_duplicates: it compares the gathered result with each occurrence's update,
  so every copy of a winning shared value receives the full cotangent: k copies
  give k * g.
* array_then_slice (rows_slice form, a.at[idx, start:stop]): the scatter writes
  windows of width stop - start, the VJP gathers windows of width 1, and the
  comparison broadcasts: only the first column of each window of v gets its
  cotangent, silently.
Scatter has no JVP in MLX; SliceUpdate's Max JVP is not implemented either, so the
JVP oracle is silent.

Complex input (complex64): maximum and minimum in MLX's order, lexicographic,
real part first, then imaginary part (mlx/types/complex.h), numpy's too; the
reference (_support/scatter.py, complex128) picks the winner by it, and the
cotangent goes to the winner unconjugated (a selection). A tie is exact
equality of both parts; equal real parts are no tie (the imaginary part
decides), and the `convention/real_part_tie` scenarios sit there. The complex
scenarios are twins of untagged ones (Scatter with repeats, SliceUpdate).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import tensor
from ._support import scatter as S
from ._support import expression as E
from ._support.complex_parts import complex_twin
from ._support.views import draw_layout, with_imaginary

# layouts a complex operand never takes: a broadcast repeats values, which ties them
TIES = ("broadcast",)


def distinct_values(n: int, seed: int) -> np.ndarray:
    """n distinct multiples of 4 around 0: no ties, and far apart for differences."""
    return 4.0 * (np.random.RandomState(seed).permutation(n) - n // 2)


# --- catalog scenarios, one list per op --------------------------------------------------------

def _extremal_case(op, name, form, mode, row_idx=None, col_idx=None, slices=None, tags=(), desc="",
                   seed=0, **extra):
    a_shape = (4, 5)
    params = dict({"form": form, "updates": mode}, **extra)
    if slices is not None:
        params["slices"] = slices
    ids = S.index_arrays(row_idx, col_idx)
    v_shape = S.v_shape_of(form, mode, a_shape, *ids, params)
    n_v = int(np.prod(v_shape, dtype=np.int64))
    vals = distinct_values(20 + n_v, 80 + seed)
    cot = np.random.RandomState(90 + seed).randint(-4, 5, size=a_shape)
    if tags:   # the repeated value must win somewhere, with a nonzero cotangent there
        order = np.sort(vals) if op == "at_max" else -np.sort(-vals)
        vals = np.concatenate([order[:20], np.random.RandomState(seed).permutation(order[20:])])
        cot = np.abs(cot) + 1
    return S.case(op, name, tensor(vals[:20].reshape(a_shape)), tensor(vals[20:].reshape(v_shape)),
                  row_idx, col_idx, ("a", "v"), tensor(cot), params, tags=tags, desc=desc)


def extremal_scenarios(op) -> list:
    c = lambda *a, **k: _extremal_case(op, *a, **k)   # noqa: E731
    rep = [2, 0, 2, 2]
    return [
        c("rows/unique", "rows", "per", [3, 0, 1], desc="control: distinct rows"),
        c("rows/repeat", "rows", "per", rep, seed=1,
          desc="row 2 written three times with distinct values: one winner per element"),
        c("cols/repeat", "cols", "per", col_idx=[1, 3, 1], seed=2),
        c("points/rank2_repeat", "points", "per", [[0, 2], [0, 2]], [[1, 4], [1, 4]], seed=3),
        c("rows/negative", "rows", "per", [3, 1, 3], negative=True, seed=4),
        c("rows/shared/unique", "rows", "shared", [1, 3], seed=5),
        c("rows/broadcast/unique", "rows", "broadcast", [0, 2, 3], seed=6),
        c("slice/rows", "slice", "per", slices=[[1, 3, None], [None, None, None]], seed=7,
          desc="a.at[1:3] (SliceUpdate)"),
        c("slice/reversed_strided", "slice", "per", slices=[[None, None, -2], [1, 5, 2]], seed=8,
          desc="a.at[::-2, 1:5:2]: negative row step, column stride 2"),
        c("slice/int_row/broadcast", "slice", "broadcast", slices=[2, [None, None, None]], seed=9,
          desc="a.at[2] with one row"),
        c("slice/broadcast_rows", "slice", "broadcast", slices=[[0, 4, 1], [None, None, -1]], seed=10,
          desc="one reversed row broadcast over four rows"),
        c("rows/shared/repeat", "rows", "shared", rep, seed=11, tags=("tied_duplicates",),
          desc="one shared row written three times to row 2: where it wins, dv is g once, not 3 g"),
        c("rows/broadcast/repeat", "rows", "broadcast", [1, 1], seed=12, tags=("tied_duplicates",)),
        c("points/shared/repeat", "points", "shared", [0, 3, 0], [2, 2, 2], seed=13,
          tags=("tied_duplicates",)),
        c("rows_slice/strided", "rows_slice", "per", [3, 0], cols=[None, None, 2], seed=14,
          desc="control: a.at[idx, ::2] (a strided slice becomes an index array)"),
        c("rows_slice/reversed", "rows_slice", "per", [1, 2, 1], cols=[None, None, -1], seed=15),
        c("rows_slice/full", "rows_slice", "per", [3, 0], cols=[None, None, None], seed=16,
          tags=("array_then_slice",),
          desc="a.at[idx, :]: the VJP gathers a window of 1 column where the scatter wrote 5, so "
               "only the first column of v gets its cotangent"),
        c("rows_slice/range", "rows_slice", "per", [2, 0], cols=[1, 4, None], seed=17,
          tags=("array_then_slice",)),
    ]


def complex_scenarios(op) -> list:
    """complex64: twins of a Scatter with a repeated row and of a SliceUpdate, then
    MLX's order where real parts tie (each v has its target's real part, and an
    imaginary part 1 above or below: the imaginary part decides every contest)."""
    c = lambda *a, **k: _extremal_case(op, *a, **k)   # noqa: E731
    twins = [complex_twin(c("rows/repeat", "rows", "per", [2, 0, 2, 2], seed=1), seed=90),
             complex_twin(c("slice/rows", "slice", "per", slices=[[1, 3, None], [None, None, None]], seed=7),
                          seed=91)]
    a = distinct_values(20, 95).reshape(4, 5) + 1j * (np.arange(20).reshape(4, 5) % 5 - 2)
    idx = [3, 0, 3, 1]
    v = a[idx].real + 1j * (a[idx].imag + np.array([1, -1, 2, -2, 1])[None] * np.array([1, -1, -2, 1])[:, None])
    cot = np.random.RandomState(96).randint(-4, 5, size=(4, 5)) + 1j * np.random.RandomState(97).randint(-3, 4,
                                                                                                        size=(4, 5))
    tie = S.case(op, "convention/real_part_tie/complex64", tensor(a, dtype="complex64"), tensor(v, dtype="complex64"),
                 idx, None, ("a", "v"), tensor(cot, dtype="complex64"), {"form": "rows", "updates": "per"},
                 desc="v shares its target's real parts (row 3 twice): the imaginary part picks each winner")
    return twins + [tie]


def all_scenarios(op) -> list:
    return extremal_scenarios(op) + complex_scenarios(op)


# --- fuzz strategy -------------------------------------------------------------------------------

def extremal_fuzz(op, draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    a_shape = (draw(D.irange(1, 5)), draw(D.irange(1, 5)))
    form = draw(D.choice(S.FORMS))
    mode = draw(D.choice(("per", "broadcast") if form == "slice" else S.MODES))
    params = {"form": form, "updates": mode}
    ids = S.draw_form(draw, form, a_shape, params)
    v_shape = S.v_shape_of(form, mode, a_shape, *ids, params)
    n_a, n_v = a_shape[0] * a_shape[1], int(np.prod(v_shape, dtype=np.int64))
    vals = distinct_values(n_a + n_v, draw(D.irange(0, 2**16)))
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "v")))))
    a, v = (_operand(draw, x, dtype) for x in (vals[:n_a].reshape(a_shape), vals[n_a:].reshape(v_shape)))
    cot, cmode = D.cotangent(draw, a_shape, dtype)
    return S.finish(op, a, v, *ids, wrt, cot, params, f"{form} {mode} a{a_shape} v{v_shape}, cotangent {cmode}")


def _operand(draw, values, dtype):
    """A drawn layout; complex64 adds imaginary parts (the distinct real parts, 4 apart,
    still decide every contest, so no tie appears)."""
    if dtype == "complex64":
        return draw_layout(draw, with_imaginary(draw, values, dtype), dtype, exclude=TIES)[0]
    return S.viewed(draw, values, dtype)


def call_expression_of(method):
    def call_expression(params, names) -> str:
        return E.call(f"{names['a']}.at{S.key_expression(params, names)}.{method}", S.updates_expression(params, names))
    return call_expression


def _record(op, pick, method):
    """One record: `pick` names the reduction ("max" or "min"), `method` the .at[] call."""
    return OpInfo(
        name=op, known_defects=(KnownDefect("array_then_slice"), KnownDefect("tied_duplicates")),
        summary=f"a.at[idx].{method}(v) (Scatter / SliceUpdate {pick.title()}): repeats, slices, no ties",
        operands=("a", "v") + S.INDEX_OPERANDS, differentiable=("a", "v"), integer_operands=S.INDEX_OPERANDS,
        optional_operands=S.INDEX_OPERANDS, reference=S.reference_of(pick),
        reference_vjp=S.reference_vjp_of(pick), exact=True,
        rule=f"out[t] = {pick}(a[t], every v written to t); g[t] goes to the unique winner among the distinct "
             "inputs (a[t], or the winning element of v, once however many writes carried it)",
        mlx_call=f".ops.repro.at_max:{op}", call_expression=call_expression_of(method),
        primitives=("Scatter", "SliceUpdate", "Maximum" if pick == "max" else "Minimum", "Gather", "Reshape",
                    "Squeeze", "Broadcast", "ExpandDims", "Transpose"),
        dtypes=("float32", "float16", "bfloat16"), complex=True,
        scenarios=partial(all_scenarios, op),
        strategy=partial(extremal_fuzz, op))


OPS = (_record("at_max", "max", "maximum"), _record("at_min", "min", "minimum"))
