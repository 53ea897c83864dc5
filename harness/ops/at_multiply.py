"""at_multiply: `a.at[key].multiply(v)` (and `.divide(v)` with params["divide"]),
where MLX has a gradient rule for it: int and slice keys, which MLX routes to
SliceUpdate with reduce Prod (ints, [start, stop, step] with steps of either sign,
a key covering the whole array short-cuts to a plain multiply).

With index-array keys (repeated or not) MLX builds a Scatter with reduce Prod,
whose VJP raises "[scatter] VJP not implemented for scatter_prod" (`.divide` is
scatter_prod of the reciprocal). That is a missing rule, not a defect: the second
record here, at_multiply_indexed (has_vjp=False), checks that forward (repeated
rows, columns and points multiply once per write) and records the refusal. The
reference's product rule already gives each write its own term, for the day MLX
adds the rule.

What is claimed: out[t] = a[t] * prod(v written to t) (divide: * prod(1 / v)), a
polynomial (rational for divide) in the inputs, so d a[t] = g[t] * prod(...) and
d v[s] = sum over the writes of g[t] * a[t] * (the other factors) * d f(v[s]),
everywhere, zeros included. Values are small integers (divide: +-1/2, +-1, +-2,
+-4), so float32 is exact. The MLX call (both records) is ops/repro/at_multiply.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.tensors import hashed_ints, tensor
from ._support import scatter as S
from ._support import expression as E


def _reduce(params) -> str:
    return "div" if params.get("divide") else "prod"


def reference(inp, params):
    return S.scatter_forward(_reduce(params), inp, params)


def reference_vjp(inp, g, params):
    return S.scatter_vjp(_reduce(params), inp, g, params)


# --- catalog ---------------------------------------------------------------------------------

def _case(name, slices, mode="per", divide=False, seed=0, desc=""):
    a_shape = (4, 5)
    params = {"form": "slice", "updates": mode, "slices": slices}
    if divide:
        params["divide"] = True
    v_shape = S.v_shape_of("slice", mode, a_shape, None, None, params)
    rng = np.random.RandomState(100 + seed)
    a = rng.randint(-3, 4, size=a_shape)
    v = rng.choice([-4, -2, -1, -0.5, 0.5, 1, 2, 4], size=v_shape) if divide else \
        rng.randint(-3, 4, size=v_shape)
    cot = rng.randint(-4, 5, size=a_shape)
    return S.case("at_multiply", name, tensor(a), tensor(v), None, None, ("a", "v"), tensor(cot), params,
                  fd=not divide, desc=desc)


def scenarios() -> list:
    full = [None, None, None]
    return [
        _case("slice/rows", [[1, 3, None], full], desc="a.at[1:3]"),
        _case("slice/reversed_strided", [[None, None, -2], [1, 5, 2]], seed=1,
              desc="a.at[::-2, 1:5:2]: negative row step, column stride 2"),
        _case("slice/int_row", [2, full], seed=2, desc="a.at[2]: one row"),
        _case("slice/int_col", [full, 3], seed=3, desc="a.at[:, 3]: one column"),
        _case("slice/broadcast_rows", [[0, 4, 1], [None, None, -1]], mode="broadcast", seed=4,
              desc="one reversed row broadcast over four rows: dv sums over them"),
        _case("slice/zeros", [[1, 4, 2], [0, 5, 1]], seed=5,
              desc="zeros among a and v: the product rule still has every term"),
        _case("slice/full", [full, full], seed=6,
              desc="a key covering all of a: MLX short-cuts to a plain multiply (control)"),
        _case("slice/divide", [[1, 3, None], [None, None, -2]], divide=True, seed=7,
              desc=".divide: SliceUpdate Prod of the reciprocal"),
    ]


# --- fuzz strategy ---------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)):
    dtype = draw(D.choice(dtypes))
    a_shape = (draw(D.irange(1, 5)), draw(D.irange(1, 5)))
    mode = draw(D.choice(("per", "broadcast")))
    params = {"form": "slice", "updates": mode, "slices": S.draw_slices(draw, a_shape)}
    v_shape = S.v_shape_of("slice", mode, a_shape, None, None, params)
    seed = draw(D.irange(0, 2**16))
    a = S.viewed(draw, hashed_ints(a_shape, seed, -3, 4), dtype)
    v = S.viewed(draw, hashed_ints(v_shape, seed + 1, -3, 4), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "v")))))
    cot, cmode = D.cotangent(draw, a_shape, dtype)
    return S.finish("at_multiply", a, v, None, None, wrt, cot, params,
                    f"slice {params['slices']} {mode}, cotangent {cmode}")


# --- index-array keys: Scatter Prod, which has no VJP in MLX --------------------------------

def _indexed(name, form, row_idx=None, col_idx=None, divide=False, seed=0, desc="", **extra):
    a_shape = (4, 5)
    params = dict({"form": form, "updates": "per"}, **extra)
    if divide:
        params["divide"] = True
    ids = S.index_arrays(row_idx, col_idx)
    v_shape = S.v_shape_of(form, "per", a_shape, *ids, params)
    rng = np.random.RandomState(110 + seed)
    v = rng.choice([-2, -1, -0.5, 0.5, 1, 2], size=v_shape) if divide else rng.randint(-3, 4, size=v_shape)
    return S.case("at_multiply_indexed", name, tensor(rng.randint(-3, 4, size=a_shape)), tensor(v), row_idx,
                  col_idx, ("a", "v"), None, params, desc=desc)


def indexed_scenarios() -> list:
    return [
        _indexed("rows/repeat", "rows", [2, 0, 2, 2], desc="row 2 multiplied three times"),
        _indexed("cols/repeat", "cols", col_idx=[1, 3, 1], seed=1),
        _indexed("points/repeat", "points", [0, 3, 0], [2, 2, 2], seed=2),
        _indexed("rows/negative", "rows", [3, 1], seed=3, negative=True),
        _indexed("rows/divide_repeat", "rows", [1, 1, 0], divide=True, seed=4,
                 desc=".divide with a repeated row: two reciprocals multiply in"),
    ]


def call_expression(params, names) -> str:
    method = "divide" if params.get("divide") else "multiply"
    return E.call(f"{names['a']}.at{S.key_expression(params, names)}.{method}", names["v"])


OPS = (
    OpInfo(name="at_multiply", summary="a.at[key].multiply / divide with int and slice keys (SliceUpdate Prod)",
           operands=("a", "v"), differentiable=("a", "v"), reference=reference, reference_vjp=reference_vjp,
           exact=True, mlx_call=".ops.repro.at_multiply:mlx_call", call_expression=call_expression,
           primitives=("SliceUpdate", "Multiply", "Divide", "Broadcast", "ExpandDims"),
           dtypes=("float32", "float16", "bfloat16"), complex=False,   # the float64 reference is real-only (docs/checking.md)
           scenarios=scenarios, strategy=fuzz_case,
           rule="out[t] = a[t] * prod of f(v) over the writes to t (f(x) = x, or 1/x for divide); "
                "d a[t] = g[t] * that product; d v[s] = sum over its writes of g[t] a[t] (the other factors) f'(v[s])"),
    OpInfo(name="at_multiply_indexed",
           summary="a.at[idx].multiply / divide with index arrays (Scatter Prod): no VJP in MLX; forward checked",
           operands=("a", "v") + S.INDEX_OPERANDS, differentiable=("a", "v"), integer_operands=S.INDEX_OPERANDS,
           optional_operands=S.INDEX_OPERANDS, reference=reference, exact=True,
           mlx_call=".ops.repro.at_multiply:mlx_call", call_expression=call_expression,
           primitives=("Scatter", "Divide", "Reshape"), dtypes=("float32", "float16", "bfloat16"), complex=False,
           second_order=False,   # Scatter Prod has no VJP in MLX
           scenarios=indexed_scenarios, has_vjp=False),
)
