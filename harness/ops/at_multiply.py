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

Complex input (complex64, slice keys): the product is holomorphic, so under
MLX's convention (vjp = conj(f'(z)) g, docs/checking.md) each term of the
product rule is conjugated: d a[t] = g[t] * conj(prod f(v)), and so on; the
reference computes J^T conj(g) with complex128 arithmetic and conjugates it.
Known defect of MLX 0.32.4 (tagged "complex_prod_conjugate"): SliceUpdate::vjp,
Prod case, multiplies the cotangent by the updates (for a) and by the sliced
values (for v) without conjugating them. A key covering all of a takes MLX's
plain multiply, whose VJP conjugates: its complex twin passes (the control).
"""
from __future__ import annotations

import numpy as np

from dataclasses import replace

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.tensors import hashed_ints, tensor
from ._support import scatter as S
from ._support import expression as E
from ._support.complex_parts import complex_twin
from ._support.views import draw_layout, with_imaginary

COMPLEX_TAG = "complex_prod_conjugate"


def _reduce(params) -> str:
    return "div" if params.get("divide") else "prod"


def _is_complex(inp, g=None) -> bool:
    return any(np.iscomplexobj(x) for x in (inp["a"], inp["v"], g) if x is not None)


def _complex_flat(inp, params):
    """(a, v, writes) in complex128: the shared scatter helpers read float64."""
    a, v = (np.asarray(inp[k], dtype=np.complex128) for k in ("a", "v"))
    return a, v, S.writes(a.shape, v.shape, *S.indices_of(inp), params)


def reference(inp, params):
    if not _is_complex(inp):
        return S.scatter_forward(_reduce(params), inp, params)
    a, v, w = _complex_flat(inp, params)
    out, vf = a.ravel().copy(), v.ravel()
    for t, srcs in w.items():
        out[t] = S.combine(_reduce(params), out[t], [vf[s] for s in srcs])
    return out.reshape(a.shape)


def reference_vjp(inp, g, params):
    if not _is_complex(inp, g):
        return S.scatter_vjp(_reduce(params), inp, g, params)
    # holomorphic: conj(J)^T g = conj(J^T conj(g)), J^T the product rule in complex arithmetic
    a, v, w = _complex_flat(inp, params)
    gc = np.conj(np.asarray(g, dtype=np.complex128)).ravel()
    da, dv = gc.copy(), np.zeros(v.size, dtype=np.complex128)
    for t, srcs in w.items():
        da[t] = _product_rule(_reduce(params), a.ravel()[t], v.ravel(), srcs, gc[t], dv)
    return {"a": np.conj(da).reshape(a.shape), "v": np.conj(dv).reshape(v.shape)}


def _product_rule(reduce, base, vf, srcs, gt, dv):
    """out = base * prod(f(v_s)) (f = identity or reciprocal), without conjugation: dv
    gains each write's term in place; returns d base."""
    f = (lambda x: x) if reduce == "prod" else (lambda x: 1.0 / x)
    df = (lambda x: 1.0) if reduce == "prod" else (lambda x: -1.0 / (x * x))
    terms = [f(vf[s]) for s in srcs]
    for k, s in enumerate(srcs):
        dv[s] += gt * base * np.prod(terms[:k] + terms[k + 1:]) * df(vf[s])
    return gt * np.prod(terms)


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
    ] + complex_scenarios()


def complex_scenarios() -> list:
    """complex64 twins (small-integer imaginary parts, complex cotangent): a slice and
    .divide (SliceUpdate Prod, tagged: its VJP does not conjugate), and the whole-array
    key (MLX's plain multiply: the untagged control)."""
    full = [None, None, None]
    tagged = [_case("slice/rows", [[1, 3, None], full]),
              _case("slice/divide", [[1, 3, None], [None, None, -2]], divide=True, seed=7)]
    out = [replace(complex_twin(s, seed=20 + k), defect_tags=(COMPLEX_TAG,)) for k, s in enumerate(tagged)]
    return out + [complex_twin(_case("slice/full", [full, full], seed=6), seed=30)]


# --- fuzz strategy ---------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)):
    dtype = draw(D.choice(dtypes))
    a_shape = (draw(D.irange(1, 5)), draw(D.irange(1, 5)))
    mode = draw(D.choice(("per", "broadcast")))
    params = {"form": "slice", "updates": mode, "slices": S.draw_slices(draw, a_shape)}
    v_shape = S.v_shape_of("slice", mode, a_shape, None, None, params)
    seed = draw(D.irange(0, 2**16))
    a, v = (_operand(draw, hashed_ints(shape, seed + k, -3, 4), dtype) for k, shape in enumerate((a_shape, v_shape)))
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "v")))))
    cot, cmode = D.cotangent(draw, a_shape, dtype)
    return S.finish("at_multiply", a, v, None, None, wrt, cot, params,
                    f"slice {params['slices']} {mode}, cotangent {cmode}")


def _operand(draw, values, dtype):
    """A drawn layout of `values`; complex64 gets small-integer imaginary parts."""
    if dtype == "complex64":
        return draw_layout(draw, with_imaginary(draw, values, dtype), dtype)[0]
    return S.viewed(draw, values, dtype)


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
    OpInfo(name="at_multiply", known_defects=(KnownDefect(COMPLEX_TAG),),
           summary="a.at[key].multiply / divide with int and slice keys (SliceUpdate Prod)",
           operands=("a", "v"), differentiable=("a", "v"), reference=reference, reference_vjp=reference_vjp,
           exact=True, mlx_call=".ops.repro.at_multiply:mlx_call", call_expression=call_expression,
           primitives=("SliceUpdate", "Multiply", "Divide", "Broadcast", "ExpandDims"),
           dtypes=("float32", "float16", "bfloat16"), complex=True,
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
