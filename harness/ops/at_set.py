"""at_set: `out = copy(a); out[key] = v`, MLX's Scatter primitive with no reduction
(MLX has no `.at[].set`; indexed assignment is how it is spelled). The scatter
machinery it shares with at_max, at_min and at_multiply (forms of the key, update
modes, the float64 rules) is in _support/scatter.py; the MLX call is
ops/repro/at_set.py.

Forms of `key` on a 2-D `a` (params["form"]): rows a[row_indices], cols
a[:, col_indices], points a[row_indices, col_indices], rows_slice
a[row_indices, start:stop:step] (params["cols"]); the slice form a[s0, s1] is
at_max/min/multiply's only (MLX routes slices to SliceUpdate, tested by
slice_update). params["updates"] says how v feeds the occurrences: per (one value
each), shared (one per DISTINCT target, expanded inside the call with mx.take, so
every write to a repeated position writes the same parameter), broadcast (one row
or value MLX broadcasts). params["negative"] passes the index arrays as negative
int32 (i - dim) to MLX.

What is claimed (reference_vjp), and what is not:
* d a: the cotangent with every written position zeroed. Always a derivative.
* d v, per: g at the occurrence's target, only when no position is written twice.
  With a repeat, which write wins is MLX's ordering and the output does not depend
  on the losing writes, so no elementwise gradient exists: those entries are NaN
  ("undefined"), and scenarios with repeats under `per` write EQUAL values (so the
  forward is defined) and differentiate with respect to `a` only.
* d v, shared / broadcast: all writes to one position read the same element of v,
  so out is a well-defined linear function of v whatever the write order, and
  dv[s] = sum of g over the DISTINCT positions that element lands on (once each,
  however many times it was written there). A reference forward that meets unequal
  writes to one position raises ReferenceUndecided instead of guessing an order.

Two defects of MLX's Scatter::vjp on 0.32.4 (tagged catalog scenarios, expected
to fail; reproducers in probes/findings/):
* duplicate_writes: it gathers the cotangent once per occurrence, so a position
  written k times returns k * g through a shared or broadcast value.
* array_then_slice: for a[idx, start:stop] (step 1 slices after the index arrays)
  MLX's indexing scatters windows of width stop - start along the sliced axis, but
  the VJP gathers windows of width 1 on every indexed axis; reshaping that to v's
  shape raises (set, and .at[].add too). Strided slices (step != 1) are turned into
  index arrays and are fine.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, tensor
from ._support import scatter as S
from ._support import expression as E
from ._support.complex_parts import complex_op

# --- catalog scenarios ----------------------------------------------------------------------


def _table(shape, seed):
    return np.random.RandomState(seed).randint(-4, 5, size=shape).astype(np.float64)


def _set_case(name, form, mode, row_idx=None, col_idx=None, wrt=("a", "v"), tags=(), desc="", **extra):
    a_shape = (4, 5)
    params = dict({"form": form, "updates": mode}, **extra)
    ids = S.index_arrays(row_idx, col_idx)
    v = S.per_target_values(form, mode, a_shape, *ids, params,
                            _table((80,), 70 + len(name)) + 6)   # +6: writes stand out from a
    return S.case("at_set", name, tensor(_table(a_shape, 71)), tensor(v), row_idx, col_idx, wrt,
                  tensor(_table(a_shape, 72)), params, fd=True, tags=tags, desc=desc)


def scenarios() -> list:
    rep = [2, 0, 2, 2]           # row 2 written three times, row 0 once, rows 1 and 3 untouched
    return [
        _set_case("rows/unique", "rows", "per", [3, 0, 1], desc="control: distinct rows"),
        _set_case("rows/repeat_equal/wrt_a", "rows", "per", rep, wrt=("a",),
                  desc="row 2 written three times with equal values: only d a is a derivative"),
        _set_case("cols/unique", "cols", "per", col_idx=[4, 1]),
        _set_case("cols/repeat_equal/wrt_a", "cols", "per", col_idx=[1, 3, 1], wrt=("a",)),
        _set_case("points/unique", "points", "per", [0, 3, 3], [1, 1, 4]),
        _set_case("points/rank2_repeat/wrt_a", "points", "per", [[0, 2], [0, 2]], [[1, 4], [1, 4]],
                  wrt=("a",), desc="2-D index arrays, each point written twice"),
        _set_case("rows/negative", "rows", "per", [3, 1], negative=True,
                  desc="indices passed as i - R: MLX must wrap them in forward and VJP alike"),
        _set_case("rows/shared/unique", "rows", "shared", [1, 3],
                  desc="control: shared values with no repeat (mx.take inside the call)"),
        _set_case("rows/broadcast/unique", "rows", "broadcast", [0, 2, 3],
                  desc="control: one row broadcast to three distinct rows: dv sums their cotangents"),
        _set_case("rows/shared/repeat", "rows", "shared", rep, tags=("duplicate_writes",),
                  desc="row 2 written three times from one shared row: dv must be g[2] once, not 3 g[2]"),
        _set_case("rows/broadcast/repeat", "rows", "broadcast", [1, 1], tags=("duplicate_writes",),
                  desc="x[[1, 1]] = w: the row w lands on row 1 once as far as the output can tell"),
        _set_case("points/shared/repeat", "points", "shared", [0, 3, 0], [2, 2, 2],
                  tags=("duplicate_writes",)),
        _set_case("rows_slice/strided", "rows_slice", "per", [3, 0], cols=[None, None, 2],
                  desc="control: a[idx, ::2] = v (MLX turns a strided slice into an index array)"),
        _set_case("rows_slice/range/wrt_a", "rows_slice", "per", [3, 0], cols=[1, 4, None], wrt=("a",),
                  desc="control: a[idx, 1:4] = v, gradient of a only"),
        _set_case("rows_slice/full", "rows_slice", "per", [3, 0], cols=[None, None, None],
                  tags=("array_then_slice",),
                  desc="a[idx, :] = v: MLX scatters a window of 5 columns but its VJP gathers a "
                       "window of 1, and reshaping that to v's shape raises"),
        _set_case("rows_slice/range", "rows_slice", "per", [1, 2], cols=[1, 4, None],
                  tags=("array_then_slice",), desc="a[idx, 1:4] = v"),
    ]


# --- fuzz strategy -----------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    a_shape = (draw(D.irange(1, 5)), draw(D.irange(1, 5)))
    form = draw(D.choice(("rows", "cols", "points", "rows_slice")))
    mode = draw(D.choice(S.MODES))
    params = {"form": form, "updates": mode}
    ids = S.draw_form(draw, form, a_shape, params)
    seed = draw(D.irange(0, 2**16))
    table = hashed_ints((a_shape[0] * a_shape[1] * 32,), seed + 3) + 6
    v = S.per_target_values(form, mode, a_shape, *ids, params, table)
    undefined = mode == "per" and S.repeated(form, *ids)   # then d v does not exist
    wrt = ("a",) if undefined else draw(D.choice(tuple(D.nonempty_subsets(("a", "v")))))
    a = S.viewed(draw, hashed_ints(a_shape, seed), dtype)
    cot, cmode = D.cotangent(draw, a_shape, dtype)
    return S.finish("at_set", a, S.viewed(draw, v, dtype), *ids, wrt, cot, params,
                    f"{form} {mode} a{a_shape} idx{tuple(np.shape(S.key_index(form, *ids)))}, cotangent {cmode}")


def call_expression(params, names) -> str:
    """out[key] = v on a copy of a (assignment replaces the copy's graph node, never a's), as one
    expression: (out := copy).__setitem__(key, v) or out."""
    key = S.key_expression(params, names)
    return E.call(f"(out := mx.array({names['a']})).__setitem__", f"np.s_{key}",
                  S.updates_expression(params, names)) + " or out"


OPS = (complex_op(OpInfo(
    name="at_set", known_defects=(KnownDefect("array_then_slice"), KnownDefect("duplicate_writes")),
    summary="out[idx] = v (Scatter, no reduction): rows, columns, points; repeats",
    operands=("a", "v") + S.INDEX_OPERANDS, differentiable=("a", "v"), integer_operands=S.INDEX_OPERANDS,
    optional_operands=S.INDEX_OPERANDS,
    reference=S.reference_of("set"), reference_vjp=S.reference_vjp_of("set"), exact=True, multilinear=True,
    rule="out = a with out[key] = v; d a = g with every written position zeroed; d v[s] = sum of g over "
         "the distinct positions v[s] is written to (once each, however many writes)",
    mlx_call=".ops.repro.at_set:mlx_call", call_expression=call_expression,
    primitives=("Scatter", "AsType", "Gather", "Reshape", "Squeeze", "Broadcast", "Transpose"),
    dtypes=("float32", "float16", "bfloat16"), complex=False,
    scenarios=scenarios, strategy=fuzz_case)),)
