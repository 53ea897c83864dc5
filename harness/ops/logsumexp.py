"""logsumexp: mx.logsumexp(a, axis, keepdims), including -inf inputs (the
reduced axes, the all -inf refusal and the strategy's inputs are in
_support/reductions.py, which softmax shares).

y = m + log(sum exp(x - m)) over the reduced axes, m the group's maximum; its
gradient is g * exp(x - y), the softmax of the group. MLX has two paths:
reducing the last axis (or trailing axes whose leading ones have size 1) is
the LogSumExp primitive, whose VJP is g * softmax(x, precise=True); any other
axes go through max/exp/sum/log composed, with `where(isinf(max), max, out)`.

-inf inputs. A group with one -inf (and a finite entry) is ordinary: that
entry contributes exp(-inf) = 0, its gradient is exactly 0, and everything is
finite; both paths are checked. A group that is entirely -inf: the true value
is -inf (the limit of log(sum exp) as every entry goes to -inf, and log 0 =
-inf), which is claimed. Its gradient is claimed nowhere: at that point the
function has no derivative (approaching along different directions, softmax
tends to any point of the simplex), and MLX's NaN there is neither right nor
wrong. The `inf_rows` parameter appends such groups as constants next to the
differentiated input (a concatenation along the first kept axis), so the
scenario claims their -inf forward and the finite gradient of the rest.
The reference refuses (ReferenceUndecided) an all -inf group in the input.

Complex input (complex64): MLX always takes the composed path, with m the
group's maximum under its lexicographic order (real part, then imaginary part;
mlx/types/complex.h), and the principal log: y = m + Log(sum exp(x - m)).
The complex logarithm is defined up to 2 pi i; MLX documents no branch, and
its shift fixes one: Im y = Im m + Arg(sum exp(x - m)), which may leave
(-pi, pi] (x = [3i, -2i]: Im y = 3.64, where the principal Log(sum exp x)
gives -2.64). Both satisfy exp(y) = sum exp(x), the only value mathematics
fixes, and MLX's keeps logsumexp([z]) = z; the reference implements MLX's
branch (SciPy's logsumexp shifts by a maximum the same way) and the
`convention/branch` scenarios sit where the two branches differ, so a changed
branch shows as a convention change, not as a wrong value elsewhere. The
gradient does not depend on the branch: dx = g * conj(exp(x - y)) (MLX's
convention, docs/checking.md).
The MLX call is ops/repro/logsumexp.py.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core import draw as D
from ..core.numeric import as_float64
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import tensor
from ._support.complex_parts import complex_twin
from ._support.lanes import with_layout
from ._support.views import draw_layout, with_imaginary
from ._support.reductions import M, M_INF, NEG_INF, draw_inputs, no_empty_group, reduced_axes
from ._support import expression as E

# --- the appended -inf groups --------------------------------------------------------------


def inf_axis(params, ndim):
    """Where `inf_rows` constant all -inf groups are appended: the first kept axis."""
    kept = [d for d in range(ndim) if d not in reduced_axes(params, ndim)]
    if not kept:
        raise ValueError("inf_rows needs an axis that is not reduced")
    return kept[0]



def with_inf_rows(x, params) -> np.ndarray:
    rows = int(params.get("inf_rows", 0))
    if not rows:
        return x
    ax = inf_axis(params, x.ndim)
    block = list(x.shape)
    block[ax] = rows
    return np.concatenate([x, np.full(block, NEG_INF)], axis=ax)


# --- float64 reference ---------------------------------------------------------------------

def lse(x, axes) -> np.ndarray:
    """logsumexp with keepdims; -inf for a group of -inf only. Complex x: m is the
    lexicographic maximum (numpy's order for complex, and MLX's), which fixes the branch."""
    m = np.max(x, axis=axes, keepdims=True)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = safe + np.log(np.sum(np.exp(x - safe), axis=axes, keepdims=True))
    return np.where(m == NEG_INF, NEG_INF, out)


def reference(inp, params):
    x = with_inf_rows(as_float64(inp["a"]), params)
    axes = reduced_axes(params, x.ndim)
    y = lse(x, axes)
    return y if params.get("keepdims", False) else np.squeeze(y, axis=axes)


def reference_vjp(inp, g, params):
    """da = g * conj(exp(a - y)): the group's softmax (conjugated: MLX's complex
    convention) times its cotangent."""
    a = as_float64(inp["a"])
    axes = reduced_axes(params, a.ndim)
    no_empty_group(a, axes, "logsumexp")
    y = lse(a, axes)
    g = as_float64(g)
    if not params.get("keepdims", False):
        g = np.expand_dims(g, axes)
    if int(params.get("inf_rows", 0)):   # the appended constant groups' cotangents
        g = np.take(g, range(a.shape[inf_axis(params, a.ndim)]), axis=inf_axis(params, a.ndim))
    return {"a": g * np.conj(np.exp(a - y))}


# --- catalog: M and M_INF (every row finite somewhere) in _support/reductions.py ------------

def _case(name, a, params, cot=None, desc=""):
    return Scenario(name=f"logsumexp/{name}", op="logsumexp", operands={"a": a}, wrt=("a",),
                    params=params, cotangent=None if cot is None else tensor(cot), family="reduce",
                    description=desc)


def _cot(shape, seed):
    return np.random.RandomState(seed).randint(-3, 4, size=shape).astype(np.float64)


def scenarios() -> list:
    return finite_scenarios() + nonfinite_scenarios() + complex_scenarios()


def finite_scenarios() -> list:
    m, mi = np.array(M, dtype=np.float64), np.array(M_INF, dtype=np.float64)
    cube = np.arange(24, dtype=np.float64).reshape(2, 3, 4) % 7 - 3
    out = []
    for keep in (True, False):
        k = "keepdims" if keep else "squeezed"
        out += [
            _case(f"axis_last/{k}", tensor(m), {"axis": -1, "keepdims": keep},
                  _cot((3, 1) if keep else (3,), 80), desc="the LogSumExp primitive"),
            _case(f"axis0/{k}", tensor(m), {"axis": 0, "keepdims": keep},
                  _cot((1, 4) if keep else (4,), 81), desc="the composed path (max, exp, sum, log)"),
            _case(f"one_neg_inf/axis_last/{k}", tensor(mi), {"axis": -1, "keepdims": keep},
                  _cot((3, 1) if keep else (3,), 82), desc="-inf entries: gradient exactly 0 there"),
            _case(f"one_neg_inf/axis0/{k}", tensor(mi.T), {"axis": 0, "keepdims": keep},
                  _cot((1, 3) if keep else (3,), 83)),
        ]
    out += [
        _case("all_axes/none", tensor(m), {"axis": None, "keepdims": False}),
        _case("all_axes/list", tensor(mi), {"axis": [0, 1], "keepdims": True}, [[2.0]]),
        _case("axes_1_2/of_3d", tensor(cube), {"axis": [1, 2], "keepdims": False}, [1, -2]),
        _case("axes_0_2/of_3d", tensor(cube), {"axis": [0, 2], "keepdims": True}, _cot((1, 3, 1), 84),
              desc="two axes that are not adjacent"),
        _case("axes_neg/size1_then_last/keepdims", tensor(cube[:, :1]), {"axis": [-2, -1], "keepdims": True},
              [[[3.0]], [[-1.0]]], desc="axes (-2, -1) of a (2, 1, 4) input: the primitive, negative axes"),
        _case("axes_neg/size1_then_last/squeezed", tensor(cube[:, :1]), {"axis": [-2, -1], "keepdims": False},
              [2.0, -3.0]),
        _case("leading_one_squeezed", tensor(cube[:1, :1]), {"axis": [0, 1, 2], "keepdims": False},
              desc="shape (1, 1, 4): every axis reduced through the primitive"),
        _case("large_values", tensor([[1000, 1001, 998], [-1000, -1003, -1001]]), {"axis": -1},
              [2, -1], desc="no overflow or underflow: the maximum is subtracted"),
        _case("strided", tensor(np.hstack([m, m + 50]), views=[{"op": "slice", "index": [[0, 3], [0, 8, 2]]}]),
              {"axis": -1}, _cot((3,), 85), desc="a stride-2 window of a wider buffer"),
        _case("transposed", tensor(m.T, views=[{"op": "transpose", "axes": [1, 0]}]), {"axis": -1},
              _cot((3,), 86)),
        _case("length1", tensor(m[:, :1]), {"axis": -1}, _cot((3,), 87), desc="logsumexp of one value is it"),
    ]
    return out


def complex_scenarios() -> list:
    """complex64 twins (imaginary parts in [-3, 3], cotangent complex too) of the last
    axis, axis 0 and -inf entries; then MLX's branch where it differs from the
    principal one (`convention/branch`: a real-part tie that the imaginary parts
    decide, so m = 3i, and Im y = 3 + Arg(1 + exp(-5i)) = 3.64 > pi)."""
    m, mi = np.array(M, dtype=np.float64), np.array(M_INF, dtype=np.float64)
    bases = [_case("axis_last", tensor(m), {"axis": -1, "keepdims": False}, _cot((3,), 90)),
             _case("axis0/keepdims", tensor(m), {"axis": 0, "keepdims": True}, _cot((1, 4), 91)),
             _case("one_neg_inf/axis_last", tensor(mi), {"axis": -1, "keepdims": False}, _cot((3,), 92))]
    branch = np.array([[3j, -2j, -4 + 1j], [1 + 3j, 1 - 2j, -5 + 0j]])
    return [complex_twin(s, seed=10 * k) for k, s in enumerate(bases)] + [
        replace(_case("convention/branch/complex64", tensor(branch, dtype="complex64"), {"axis": -1},
                      desc="Im y = Im m + Arg(sum exp(x - m)), m the lexicographic maximum: above pi here"),
                cotangent=tensor([1 + 2j, -1 + 1j], dtype="complex64"))]


def nonfinite_scenarios() -> list:
    """NON-FINITE EXPECTED VALUES: all -inf groups (appended as constants, see the
    module docstring): the forward is -inf there and finite elsewhere, the gradient
    of the differentiated input finite. Until the comparison rule accepts equal
    non-finite expected values these fail on the observed -inf."""
    m = np.array(M, dtype=np.float64)
    return [
        _case("nonfinite/all_neg_inf_row/axis_last", tensor(m), {"axis": -1, "inf_rows": 1},
              [1, -2, 3, 5], desc="a fourth row of -inf: forward -inf there (the primitive)"),
        _case("nonfinite/all_neg_inf_row/keepdims", tensor(m), {"axis": 1, "keepdims": True, "inf_rows": 2},
              [[1], [-2], [3], [5], [2]]),
        _case("nonfinite/all_neg_inf_column/axis0", tensor(m), {"axis": 0, "inf_rows": 1},
              [1, -2, 3, 2, 4], desc="a fifth column of -inf reduced along axis 0 (the composed path)"),
    ]


# --- fuzz strategy -------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    values, axis, infs = draw_inputs(draw)
    keep = draw(D.choice((False, True)))
    params = {"axis": axis, "keepdims": keep}
    y = reference({"a": values}, params)
    cot, mode = D.cotangent(draw, y.shape, dtype)
    a = draw_layout(draw, with_imaginary(draw, values, dtype), dtype)[0] if dtype == "complex64" \
        else with_layout(draw, values, dtype)
    return D.finish(Scenario(name="", op="logsumexp", operands={"a": a},
                             wrt=("a",), cotangent=cot, params=params, family="reduce",
                             description=f"generated: axis {axis}, keepdims {keep}, {infs}, cotangent {mode}"))


def call_expression(params, names) -> str | None:
    """mx.logsumexp; under params["inf_rows"] the -inf groups are concatenated along the first kept
    axis first. That axis is written only where the params fix it without a's rank (None otherwise:
    the reproducer then embeds the call file)."""
    a, axis = names["a"], params.get("axis")
    x, rows = a, params.get("inf_rows", 0)
    if rows:
        axes = [axis] if isinstance(axis, int) else axis
        if axes is None or any(d < 0 for d in axes) and axes != [-1]:
            return None
        ax = 0 if axes == [-1] else min(d for d in range(len(axes) + 1) if d not in axes)
        shape = ", ".join([f"{a}.shape[{d}]" for d in range(ax)] + [str(rows), f"*{a}.shape[{ax + 1}:]"])
        x = f'mx.concatenate([{a}, mx.full(({shape}), -float("inf"), dtype={a}.dtype)], axis={ax})'
    return E.call("mx.logsumexp", x, axis=E.lit(axis), keepdims=E.lit(params.get("keepdims", False)))


OPS = (OpInfo(
    name="logsumexp", summary="mx.logsumexp: primitive and composed paths, keepdims, -inf inputs",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    mlx_call=".ops.repro.logsumexp:mlx_call", call_expression=call_expression,
    primitives=("LogSumExp", "Reduce", "Exp", "Log", "Add", "Subtract", "Select", "Squeeze", "Concatenate"),
    dtypes=("float32", "float16", "bfloat16"), complex=True,
    scenarios=scenarios, strategy=fuzz_case,
    rule="y = m + log(sum exp(x - m)) over the reduced axes (m the group's maximum; inf_rows appends "
         "constant groups of -inf, whose y is -inf); dx = g * exp(x - y), exactly 0 at -inf entries"),)
