"""The reductions, one table: sum, prod, max, min (MLX's Reduce primitive, one
record per reduce type), and mean, var, std (compositions on it); axis None, one
axis, several, negative ones, keepdims, and ddof for var and std.

Reverse rules, each on the group of elements an output reduces (g broadcast back
over the reduced axes):
  sum   d x = g
  prod  d x_i = g * conj(product of the rest of the group): exact where the
        group holds zeros (MLX builds it from two exclusive cumprods)
  mean  d x = g / N
  var   d x = 2 g (x - mu) / (N - ddof) (complex: the mean squared magnitude)
  std   d x = g (x - mu) / ((N - ddof) std); a constant group (std 0) has no
        derivative: the reference refuses to judge it
  max, min: where the extreme is attained once, g goes to it. At ties the
        output has no derivative; MLX's convention (Reduce::vjp: mask of the
        elements equal to the output, cotangent divided by their count) splits
        g equally among the tied elements. The reference implements that
        convention, and the catalog holds scenarios at ties under
        ".../convention/...".

Complex input (complex64 calls, complex128 references): sum, prod, mean, var and
std by the rules above (prod conjugates; var and std are real, the mean squared
magnitude). max and min: MLX documents no order for complex values; 0.32.4
reduces lexicographically, real part then imaginary part (operator< in
mlx/types/complex.h; -0.0 and 0.0 are equal real parts), as numpy does for
finite values, and Reduce::vjp's mask of the elements equal to the output
routes g unconjugated (exact ties, both parts equal, share it as real ties
do). Where real parts tie with different imaginary parts the extreme is
defined but not locally constant (a real perturbation changes the winner):
no derivative, so those rows run under ".../convention/real_part_tie/...",
judged by the reference and vmap only; complex twins of plain rows keep
distinct real parts (every oracle decides), and the strategies draw complex64
with distinct real parts. NaN is not judged: a NaN real part propagates as
nan+0j with NaN gradients everywhere (as a real NaN does), while a NaN only in
an imaginary part is skipped by max and returned as nan+0j by min
(tests/ops/test_reduce.py pins both).

All hand-written (numpy, float64 or complex128), so second order is checked too
(the VJP of prod is multilinear in the rest of the group). The MLX calls are
ops/repro/reduce.py, one function per op.

Known defects of MLX 0.32.4 (tagged "prod/defect/..." and "prod/complex"):
prod's second order is wrong for complex input (its VJP uses cumprod, whose
Scan::vjp takes no conjugate); prod over several axes of a zero-size operand has
a VJP that raises (a reshape to -1 of an empty array).

Not in the catalog, on purpose: a CPU reduction of a zero-size operand made from
numpy (as the harness makes every operand) over an empty axis. The reduction
plan keeps only axes longer than 1, so over every axis of a (0, n) operand it
reduces n elements of an empty buffer (garbage instead of 1 for prod, or 0 for
sum), and over the empty axis of a (2, 0) operand it has no axes left and reads
past an empty vector (slow, wrong, or SIGFPE, which would take a test process
down). A reproducer that builds its operand with a reshape does not show it, so
the catalog and the strategies keep every reduced axis non-empty and
probes/findings/prod__empty_reads_past_buffer.py (operands from numpy) shows it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core import draw as D
from ..core.numeric import ReferenceUndecided
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints
from ._support import expression as E
from ._support.cases import case, in_half_precision, logical_inputs
from ._support.complex_parts import complex_twin
from ._support.reductions import draw_axes, reduced_axes
from ._support.views import draw_layout, draw_shape, laid_out, with_imaginary

FLOATS = ("float32", "float16", "bfloat16")


# --- float64 references --------------------------------------------------------------------------

def _axes(x, params) -> tuple:
    return reduced_axes(params, np.ndim(x)) if np.ndim(x) else ()


def _back(g, x, params):
    """The cotangent broadcast back over the reduced axes (as if keepdims)."""
    g = np.asarray(g)
    if not params.get("keepdims", False):
        g = np.expand_dims(g, _axes(x, params))
    return np.broadcast_to(g, np.shape(x))


def _count(x, params) -> int:
    return int(np.prod([np.shape(x)[a] for a in _axes(x, params)], dtype=np.int64))


def _numpy(fn):
    def forward(inp, params):
        x = np.asarray(inp["a"])
        return np.asarray(fn(x, axis=_axes(x, params), keepdims=params.get("keepdims", False)))
    return forward


def _var(x, axis, keepdims, ddof=0):
    mu = np.mean(x, axis=axis, keepdims=True)
    sq = np.real((x - mu) * np.conj(x - mu))
    return np.sum(sq, axis=axis, keepdims=keepdims) / (_size(x, axis) - ddof)


def _size(x, axis) -> int:
    return int(np.prod([x.shape[a] for a in axis], dtype=np.int64))


def _moments(inp, params):
    x = np.asarray(inp["a"])
    return np.asarray(_var(x, _axes(x, params), params.get("keepdims", False), params.get("ddof", 0)))


def _exclusive_products(x, axes):
    """The product of each element's group without that element (zeros handled exactly)."""
    if x.size == 0:
        return np.ones_like(x)
    moved = np.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
    lanes = moved.reshape(moved.shape[: x.ndim - len(axes)] + (-1,))
    out = np.ones_like(lanes)
    for j in range(lanes.shape[-1]):
        out[..., j] = np.prod(np.delete(lanes, j, axis=-1), axis=-1)
    return np.moveaxis(out.reshape(moved.shape), tuple(range(x.ndim - len(axes), x.ndim)), axes)


def _vjp_sum(x, g, p):
    return _back(g, x, p).copy()


def _vjp_mean(x, g, p):
    return _back(g, x, p) / _count(x, p)


def _vjp_prod(x, g, p):
    return _back(g, x, p) * np.conj(_exclusive_products(x, _axes(x, p))) if x.ndim else np.asarray(g) * 1


def _vjp_extreme(fn):
    def vjp(x, g, p):
        out = fn(x, axis=_axes(x, p), keepdims=True)
        mask = (x == out).astype(np.float64)
        return _back(g, x, p) * mask / np.sum(mask, axis=_axes(x, p), keepdims=True)
    return vjp


def _vjp_var(x, g, p):
    axes = _axes(x, p)
    mu = np.mean(x, axis=axes, keepdims=True)
    return 2 * _back(g, x, p) * (x - mu) / (_count(x, p) - p.get("ddof", 0))


def _vjp_std(x, g, p):
    axes = _axes(x, p)
    s = np.sqrt(_var(x, axes, True, p.get("ddof", 0)))
    if np.any(s == 0):
        raise ReferenceUndecided("std: a group with zero spread has no derivative")
    mu = np.mean(x, axis=axes, keepdims=True)
    return _back(g, x, p) * (x - mu) / ((_count(x, p) - p.get("ddof", 0)) * s)


# --- the table -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Reduction:
    # Identity, the MLX function and primitives, the call file's function.
    name: str
    summary: str
    primitives: tuple
    call: str
    # numpy forward (inputs, params) and reverse rule (x, g, params) -> d x.
    forward: Callable
    vjp: Callable
    rule: str
    # Catalog extras () -> rows, value maker (shape, seed) -> values, and what the op takes.
    extras: Callable
    values: Callable
    complex: bool = True
    exact: bool = True
    multilinear: bool = False
    ddof: bool = False
    # Layouts its strategy never draws (a broadcast repeats values: ties for max and min).
    avoid: tuple = ()
    # Complex catalog: the plain rows that get a complex64 twin (complex_twin: the values
    # as real parts, small-integer imaginary parts), and complex-only rows () -> rows.
    twins: tuple = ()
    complex_extras: Callable = None


def ints(shape, seed):
    return seeded_ints(tuple(shape), 400 + seed)


def small(shape, seed):
    """Products stay small: values in [-3, 3]."""
    return seeded_ints(tuple(shape), 420 + seed, -3, 4)


def distinct(shape, seed):
    """Distinct values (no ties): a permutation, centred."""
    n = int(np.prod(shape, dtype=np.int64))
    return (np.random.RandomState(440 + seed).permutation(n) - n // 2).astype(np.float64).reshape(shape)


def _no_extras():
    return []


def _extras_prod():
    return [("zeros/one", {"a": np.array([[2.0, 0.0, 3.0], [1.0, -2.0, 3.0]])}, {"axis": 1}, "a zero in a group"),
            ("zeros/two", {"a": np.array([[0.0, 2.0, 0.0, 3.0]])}, {"axis": -1}, "two zeros: every gradient is 0"),
            ("zeros/several_axes", {"a": np.array([[[0.0, 2.0], [3.0, -1.0]], [[2.0, 2.0], [1.0, 0.0]]])},
             {"axis": [0, 2]}, "a zero, reduced over two axes"),
            ("defect/empty_several_axes_vjp", {"a": np.zeros((2, 0, 3))}, {"axis": [0, 2]},
             "several axes of a zero-size operand: Reduce::vjp reshapes to (..., -1), which MLX cannot infer "
             "for an empty array, so the VJP raises")]


def _extras_extreme(sign):
    def rows():
        tie = np.array([[3.0, 1.0, 3.0], [2.0, 2.0, 2.0]]) * sign
        inf = np.array([1.0, np.inf, -np.inf]) * sign
        return [("convention/ties_split", {"a": tie}, {"axis": 1},
                 "ties: MLX divides g equally among the tied elements (1/2 and 1/3 each)"),
                ("convention/ties_all_axes", {"a": tie}, {"axis": None}, "five tied elements share g"),
                ("infinite", {"a": inf}, {"axis": 0}, "the extreme is infinite: g goes to it")]
    return rows


# Complex max and min (MLX documents no order for complex values; 0.32.4 orders them
# lexicographically, real part then imaginary part, as operator< in mlx/types/complex.h,
# and Reduce::vjp masks the elements equal to the output). Each group's real parts tie
# in a block the imaginary part decides (row 3: -0.0 and 0.0 are equal real parts), so
# an order by real parts alone picks another element; the exact ties (both parts equal)
# share g as real ties do.
REAL_TIE = [[1 + 2j, 1 + 5j, -3 + 9j, 0 - 1j],
            [2 - 1j, -4 + 0j, -4 + 3j, 2 - 2j],
            [complex(-0.0, 3.0), 0 - 2j, -1 + 1j, -1 + 0j]]
EXACT_TIE = [[1 + 2j, 3 - 1j, 3 - 1j, 2 + 5j], [2 + 2j, 2 + 2j, 2 + 2j, -5 + 7j]]


def _complex_extreme(sign):
    def rows():
        tie, exact = np.array(REAL_TIE) * sign, np.array(EXACT_TIE) * sign
        return [("convention/real_part_tie/complex64", {"a": tie}, {"axis": 1},
                 "real parts tie, the imaginary part decides (MLX's lexicographic order): no derivative "
                 "there (a real perturbation changes the winner), g goes unconjugated to MLX's extreme"),
                ("convention/real_part_tie/all_axes/complex64", {"a": tie}, {"axis": None},
                 "the whole operand: two elements share the extreme real part"),
                ("convention/ties_split/complex64", {"a": exact}, {"axis": -1},
                 "exact complex ties (both parts equal): g divided equally among them, unconjugated"),
                ("convention/ties_split/all_axes_keepdims/complex64", {"a": exact}, {"axis": None, "keepdims": True},
                 "")]
    return rows


def _extras_var():
    return [("ddof1", {"a": ints((3, 4), 20)}, {"axis": 1, "ddof": 1}, "the sample variance"),
            ("ddof2_axes", {"a": ints((2, 3, 2), 21)}, {"axis": [0, 2], "ddof": 2}, "")]


def _extras_std():
    return [("ddof1", {"a": distinct((3, 4), 22)}, {"axis": -1, "ddof": 1}, "")]


_EXTREME = ("the extreme gets g (complex: MLX's lexicographic order, g unconjugated); tied extremes "
            "(MLX's convention) share g equally")
_EXTREME_TWINS = ("axis1", "axes_pair", "all_keepdims", "transposed", "strided", "reversed")
TABLE = (
    Reduction("sum", "mx.sum (Reduce sum)", ("Reduce",), "sum_", _numpy(np.sum), _vjp_sum,
              "d x = g broadcast over the reduced axes", _no_extras, ints, multilinear=True),
    Reduction("prod", "mx.prod (Reduce prod): zeros in a group, several axes", ("Reduce",), "prod",
              _numpy(np.prod), _vjp_prod, "d x_i = g * conj(product of the rest of its group)",
              _extras_prod, small),
    Reduction("max", "mx.max (Reduce max): ties by MLX's convention, infinities", ("Reduce",), "max_",
              _numpy(np.max), _vjp_extreme(np.max), _EXTREME, _extras_extreme(1.0), distinct,
              avoid=("broadcast",), twins=_EXTREME_TWINS, complex_extras=_complex_extreme(1.0)),
    Reduction("min", "mx.min (Reduce min): ties by MLX's convention, infinities", ("Reduce",), "min_",
              _numpy(np.min), _vjp_extreme(np.min), _EXTREME, _extras_extreme(-1.0), distinct,
              avoid=("broadcast",), twins=_EXTREME_TWINS, complex_extras=_complex_extreme(-1.0)),
    Reduction("mean", "mx.mean (Reduce sum and Multiply)", ("Reduce", "Multiply"), "mean", _numpy(np.mean),
              _vjp_mean, "d x = g / N, N the group size", _no_extras, ints, exact=False, multilinear=True),
    Reduction("var", "mx.var: ddof, complex (the mean squared magnitude)",
              ("Reduce", "Multiply", "Broadcast", "Subtract", "Square", "Divide", "Conjugate", "Real"), "var",
              _moments, _vjp_var, "d x = 2 g (x - mu) / (N - ddof)", _extras_var, ints, exact=False, ddof=True),
    Reduction("std", "mx.std: ddof; a group without spread has no derivative",
              ("Reduce", "Multiply", "Broadcast", "Subtract", "Square", "Sqrt"), "std",
              lambda inp, p: np.sqrt(_moments(inp, p)), _vjp_std, "d x = g (x - mu) / ((N - ddof) std)",
              _extras_std, distinct, exact=False, ddof=True, avoid=("broadcast",), twins=("axes_pair", "ddof1")),
)


# --- catalog ------------------------------------------------------------------------------------

# (name, shape, layout, params, description): every op's rows, values from its own maker.
ROWS = (
    ("axis1", (3, 4), "contiguous", {"axis": 1}, ""),
    ("negative_axis_keepdims", (2, 3, 4), "contiguous", {"axis": -1, "keepdims": True}, ""),
    ("axes_pair", (2, 3, 4), "contiguous", {"axis": [0, 2]}, "two axes, not adjacent"),
    ("all", (3, 4), "contiguous", {"axis": None}, ""),
    ("all_keepdims", (2, 3), "contiguous", {"axis": None, "keepdims": True}, ""),
    ("rank0", (), "contiguous", {"axis": None}, "a 0-d operand"),
    ("zero_size/kept_axis_empty", (0, 3), "contiguous", {"axis": 1}, "no groups: empty output and gradient"),
    ("transposed", (3, 4), "transposed", {"axis": 0}, ""),
    ("strided", (2, 3), "strided", {"axis": 1}, ""),
    ("reversed", (2, 4), "reversed", {"axis": -1}, "a negative stride"),
    ("broadcast", (3, 2), "broadcast", {"axis": -1}, "a stride-0 leading axis"),
    ("singleton", (2, 1, 3), "singleton", {"axis": [1, 2]}, "a singleton axis among the reduced ones"),
)


def _applies(op: Reduction, name: str) -> bool:
    return not (name == "rank0" and op.name == "std")   # std of one element: no spread, no derivative


# Known defects of MLX 0.32.4 a complex scenario hits: prod's VJP is right, but its own VJP
# (second order) goes through cumprod, whose Scan::vjp does not conjugate for complex inputs.
COMPLEX_TAGS = {"prod": ("complex_scan_conjugate",)}
EXTRA_TAGS = {"defect/empty_several_axes_vjp": ("empty_several_axes_vjp",)}
# Their declarations: the complex class shows at second order only (prod's VJP is right).
DEFECTS = {"prod": (KnownDefect("complex_scan_conjugate", revealed_by="second_order"),
                    KnownDefect("empty_several_axes_vjp"))}
COMPLEX_NOTES = {"prod": "second order is wrong on MLX 0.32.4: prod's VJP multiplies by conj(cumprod ...), "
                         "and Scan::vjp (cumprod) takes no conjugate for complex inputs"}


def _scenario(op: Reduction, name, operands, params, desc, seed, fd=False, tags=()):
    return case(op.name, name, operands, params, reference=op.forward, seed=seed, family="reduce",
                desc=desc, fd=fd, tags=tags)


def _twin(op: Reduction, s, seed):
    """The complex64 twin of a plain scenario; a real output (std) keeps its real cotangent."""
    twin = complex_twin(s, seed)
    real = not np.iscomplexobj(op.forward(logical_inputs(twin.operands), s.params))
    return dataclasses.replace(twin, cotangent=s.cotangent) if real else twin


def _scenarios(op: Reduction):
    def build():
        out = []
        for k, (name, shape, lay, params, desc) in enumerate(r for r in ROWS if _applies(op, r[0])):
            a = laid_out(op.values(shape, k), lay)[0]
            out.append(_scenario(op, name, {"a": a}, params, desc, k, fd=k == 0))
        for k, (name, values, params, desc) in enumerate(op.extras(), start=len(out)):
            out.append(_scenario(op, name, {"a": laid_out(values["a"])[0]}, params, desc, k,
                                 tags=EXTRA_TAGS.get(name, ())))
        if op.complex:
            z = op.values((2, 3), 90) + 1j * op.values((2, 3), 91)
            tags = COMPLEX_TAGS.get(op.name, ())
            out.append(_scenario(op, "complex", {"a": laid_out(z, dtype="complex64")[0]}, {"axis": 1},
                                 COMPLEX_NOTES.get(op.name, ""), len(out), tags=tags))
            plain = {s.name: s for s in out}
            out += [_twin(op, plain[f"{op.name}/{n}"], 60 + k) for k, n in enumerate(op.twins)]
            for k, (name, values, params, desc) in enumerate(op.complex_extras() if op.complex_extras else [],
                                                             start=len(out)):
                out.append(_scenario(op, name, {"a": laid_out(values["a"], dtype="complex64")[0]}, params, desc, k))
        return out + in_half_precision(out, picks=1)
    return build


# --- fuzz strategy -------------------------------------------------------------------------------

def _fit(op: Reduction, shape, axis) -> tuple:
    """A drawn shape made fit for the op: no reduced axis of size 0 (an empty group
    has no mean, variance or extreme; for sum and prod, MLX 0.32.4's CPU reduction
    over an empty axis of an operand made from numpy is undefined behaviour: see the
    module text), and std needs groups of at least 2 distinct values (a rank-0 draw
    becomes a vector)."""
    shape = list(shape) or ([2] if op.name == "std" else [])
    if not shape:
        return ()
    reduced = reduced_axes({"axis": axis}, len(shape))
    for ax in reduced:
        shape[ax] = max(shape[ax], 1)
    if op.name == "std" and int(np.prod([shape[ax] for ax in reduced])) < 2:
        shape[reduced[0]] = 2
    return tuple(shape)


def _drawn_values(op: Reduction, shape, seed, dtype):
    """The op's values; for prod in half precision signs only (one in eight a 0): a product
    of up to 64 values in [-3, 3] overflows float16 and is inexact in bfloat16 (arithmetic,
    not a defect)."""
    if op.name == "prod" and dtype in ("float16", "bfloat16"):
        rng = np.random.RandomState(460 + seed)
        return rng.choice((-1.0, 1.0, 1.0, -1.0, 1.0, -1.0, 1.0, 0.0), size=tuple(shape))
    return op.values(shape, seed)


def _strategy(op: Reduction):
    def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
        dtype = draw(D.choice(dtypes if op.complex else tuple(d for d in dtypes if d != "complex64")))
        shape = draw_shape(draw, 0, 3, 4)
        axis = draw_axes(draw, len(shape)) if shape else None
        shape = _fit(op, shape, axis)
        params = {"axis": axis, "keepdims": bool(draw(D.irange(0, 1)))}
        if op.ddof:   # fewer elements than ddof + 1: no variance (MLX divides by max(N - ddof, 0))
            n = int(np.prod([shape[ax] for ax in reduced_axes(params, len(shape))])) if shape else 1
            params["ddof"] = draw(D.irange(0, 1)) if n > 1 else 0
        values = _drawn_values(op, shape, draw(D.irange(0, 2**16)), dtype)
        a = draw_layout(draw, with_imaginary(draw, values, dtype), dtype, exclude=op.avoid)[0]
        y = op.forward(logical_inputs({"a": a}), params)
        cot, mode = D.cotangent(draw, np.shape(y), dtype)
        return D.finish(Scenario(name="", op=op.name, operands={"a": a}, wrt=("a",), params=params,
                                 cotangent=cot, family="reduce",
                                 description=f"generated: a{shape} axis {axis}, cotangent {mode}"))
    return fuzz_case


def _expression(op: Reduction):
    def expression(params, names):
        extra = {"ddof": E.lit(params.get("ddof", 0))} if op.ddof else {}
        return E.call(f"mx.{op.name}", names["a"], axis=E.lit(params.get("axis")),
                      keepdims=E.lit(params.get("keepdims", False)), **extra)
    return expression


def _record(op: Reduction) -> OpInfo:
    return OpInfo(
        name=op.name, known_defects=DEFECTS.get(op.name, ()), summary=op.summary, operands=("a",),
        differentiable=("a",), reference=op.forward,
        reference_vjp=lambda inp, g, params: {"a": op.vjp(np.asarray(inp["a"]), np.asarray(g), params)},
        exact=op.exact, multilinear=op.multilinear, mlx_call=f".ops.repro.reduce:{op.call}",
        call_expression=_expression(op), primitives=op.primitives, dtypes=FLOATS, complex=op.complex,
        scenarios=_scenarios(op), strategy=_strategy(op), rule=op.rule)


OPS = tuple(_record(op) for op in TABLE)
