"""The unary elementwise ops, one OpInfo per MLX primitive, from one table (UNARY).

Each row names MLX's function, the primitives its call exercises, the float64
forward (numpy; complex128 where the op takes complex64) and either its
derivative f' (the VJP is then g * conj(f'(x)): MLX's complex convention,
running/execute.py) or the VJP itself, the Domain its values come from
(_support/elementwise.py: the function is smooth there, kinks and edges a
stated margin away), the dtypes MLX accepts and whether complex64 has a VJP.
Every row gets the same catalog (`scenarios`): rank 0, rank 1, rank 3
transposed, strided, reversed (negative steps), broadcast, singleton axis,
zero-size, float16 and bfloat16, complex64 where the op takes it, and its
convention points. At a non-differentiable point the reference follows what
MLX implements, stated in the row's rule (abs'(0) = sign(0) = 0; floor, ceil,
round and sign have derivative 0 everywhere, jumps included), and the catalog
has scenarios AT those points, named ".../convention/...": a change of
convention is then a finding of its own kind.

Two ops are written outside the table: astype (the AsType primitive, a param
for the target dtype) and identity (the Copy primitive MLX puts in front of
every differentiated input). MLX's calls are ops/repro/elementwise.py.
astype from complex64 to a real dtype keeps the real part (MLX documents no
rule; 0.32.4 does that, as numpy's cast does with a ComplexWarning), and its
VJP returns the real cotangent as complex64 with imaginary part 0 (L = g Re x
has no Im x term): rows "unary/astype/<real>/complex64/transposed".
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core import draw as D
from ..core.opinfo import FIRST_ORDER_CHECKS, KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import as_seen, tensor
from ._support import expression as E
from ._support import elementwise as W
from ._support.elementwise import Domain

FLOATS = ("float32", "float16", "bfloat16")
REPRO = ".ops.repro.elementwise"
# A defect class found by this table (see the Findings table): MLX's sign of a complex
# z is z / |z|, whose derivative is not 0, yet Sign::vjp returns zeros for every dtype.
# abs meets it at second order: Abs::vjp is g * sign(z), so the VJP of abs's VJP is 0
# where |z| has a nonzero Hessian.
COMPLEX_SIGN = "complex_sign_zero_grad"


@dataclass(frozen=True)
class Unary:
    # Identity: the op's name, MLX's function (mx.<call>), the primitives its calls exercise.
    name: str
    call: str
    primitives: tuple
    # The float64 reference: forward(x) (numpy; complex128 in, complex128 out where the op
    # takes complex), and its derivative f'(x) (VJP g * conj(f'(x))) or vjp(x, g) itself.
    forward: Callable
    rule: str
    derivative: Callable | None = None
    vjp: Callable | None = None
    # Inputs: where real values come from, the dtypes MLX takes, whether complex64 has a
    # VJP, whether a complex input gives a real output (abs, real, imag).
    domain: Domain = Domain(-3.0, 3.0)
    dtypes: tuple = FLOATS
    complex: bool = False
    real_output: bool = False
    # Convention points: (name, values, what MLX does there), run as catalog scenarios.
    conventions: tuple = ()
    # exact: float32 is exact on grid values (zeros of the reference are exact zeros);
    # multilinear: linear in x; analytic: the forward is analytic, complex128 in (complex
    # step; None: whenever a derivative is given) (core/opinfo.py).
    exact: bool = False
    multilinear: bool = False
    analytic: bool | None = None
    # Defect class of its complex64 scenarios, where MLX 0.32.4 is known wrong there;
    # complex_first: the primitive only runs on complex input (on a real one the call
    # returns its input), so the layouts are complex64 and float32 gets one scenario.
    complex_defect: str = ""
    complex_first: bool = False

    def __post_init__(self):
        if (self.derivative is None) == (self.vjp is None):
            raise ValueError(f"Unary {self.name!r}: give exactly one of the fields derivative and vjp")
        if not self.dtypes or not set(self.dtypes) <= set(FLOATS):
            raise ValueError(f"Unary {self.name!r}: field dtypes {self.dtypes!r} must be a subset of {FLOATS}")
        if (self.real_output or self.complex_first) and not self.complex:
            raise ValueError(f"Unary {self.name!r}: fields real_output and complex_first need complex")
        if not all(isinstance(c, tuple) and len(c) == 3 for c in self.conventions):
            raise ValueError(f"Unary {self.name!r}: field conventions holds (name, values, description) triples")


# --- special functions in float64 (numpy and the standard library only) -------------------------

_ERF = np.vectorize(math.erf, otypes=[np.float64])


def erf(x):
    return _ERF(np.asarray(x, dtype=np.float64))


def erfinv(y):
    """Newton on math.erf from a rough start: float64-exact for |y| <= 0.9."""
    y = np.asarray(y, dtype=np.float64)
    x = np.arctanh(y) * 0.9
    for _ in range(40):
        x = x - (erf(x) - y) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
    return x


def _sqrt1(z, sign=1.0):
    """sqrt(1 - z) sqrt(1 + z) (sign > 0) or sqrt(z - 1) sqrt(z + 1) (sign < 0): in this
    product form, not as sqrt(1 - z^2), the derivatives of arccos, arcsin and arccosh
    stay on the principal branch MLX's (and numpy's) forward takes, off the real axis too."""
    return np.sqrt(1 - z) * np.sqrt(1 + z) if sign > 0 else np.sqrt(z - 1) * np.sqrt(z + 1)


# --- non-holomorphic and zero-derivative VJPs ------------------------------------------------------

def _abs_vjp(x, g):
    """sign(x) g: 0 at x = 0 (MLX's convention); z / |z| g for a complex z (real g)."""
    if np.iscomplexobj(x):
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(x == 0, 0.0, g * x / np.where(x == 0, 1.0, np.abs(x)))
    return g * np.sign(x)


def _zero_vjp(x, g):
    return np.zeros(np.shape(x), dtype=np.asarray(x).dtype)


def _sign_vjp(x, g):
    """0 for real x (jumps included, MLX's convention); for a complex z, sign z = z / |z|
    and L = Re(conj(g) z / |z|) has gradient (g - Re(conj(g) s) s) / |z|, s = z / |z|."""
    if not np.iscomplexobj(x):
        return _zero_vjp(x, g)
    r = np.abs(x)
    s = x / r
    return (g - np.real(np.conj(g) * s) * s) / r


def _complex_sign(x):
    if np.iscomplexobj(x):
        return x / np.abs(x)
    return np.sign(x)


def _real_vjp(x, g):
    return np.asarray(g, dtype=np.complex128) if np.iscomplexobj(x) else np.asarray(g)


def _imag_vjp(x, g):
    """L = g Im z: gradient i g; a real input has imaginary part 0 and gradient 0."""
    return 1j * np.asarray(g) if np.iscomplexobj(x) else np.zeros(np.shape(x))


def _conj_vjp(x, g):
    return np.conj(g)


def _one(x):
    return np.ones(np.shape(x))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# --- the table -------------------------------------------------------------------------------------

ZERO = ("at_zero", [0.0, -2.0, 1.5], "x = 0: MLX's sign(0) = 0 makes the gradient 0")
JUMPS = ("at_jumps", [-2.0, 0.0, 1.0, 2.5], "at the jumps too the gradient is 0 (MLX's convention)")
HALF_JUMPS = ("at_jumps", [-1.5, 0.5, 2.5, 1.0], "at x = k + 1/2 too the gradient is 0 (MLX's convention)")
# The intervals also keep core/numeric.py's first-order differences (first step 1/16)
# decided on every value: the inverse functions stay 9/16 from their singularities at
# +-1, the logarithms and roots 11/16 from 0.
UNIT = Domain(-0.4375, 0.4375)
POSITIVE = Domain(0.6875, 4.0)
C = dict(complex=True)

UNARY = (
    Unary("abs", "abs", ("Abs",), np.abs, "d|x| = sign(x) g (0 at x = 0, MLX's convention); z/|z| g for complex z",
          vjp=_abs_vjp, domain=Domain(-3.0, 3.0, ("zero",)), conventions=(ZERO,), exact=True, real_output=True,
          complex_defect=COMPLEX_SIGN, **C),
    Unary("arccos", "arccos", ("ArcCos",), np.arccos, "d arccos x = -g / sqrt(1 - x^2)",
          derivative=lambda z: -1 / _sqrt1(z), domain=UNIT, **C),
    Unary("arccosh", "arccosh", ("ArcCosh",), np.arccosh, "d arccosh x = g / sqrt(x^2 - 1)",
          derivative=lambda z: 1 / _sqrt1(z, -1.0), domain=Domain(1.5, 4.0), **C),
    Unary("arcsin", "arcsin", ("ArcSin",), np.arcsin, "d arcsin x = g / sqrt(1 - x^2)",
          derivative=lambda z: 1 / _sqrt1(z), domain=UNIT, **C),
    Unary("arcsinh", "arcsinh", ("ArcSinh",), np.arcsinh, "d arcsinh x = g / sqrt(x^2 + 1)",
          derivative=lambda z: 1 / np.sqrt(1 + z * z), **C),
    Unary("arctan", "arctan", ("ArcTan",), np.arctan, "d arctan x = g / (1 + x^2)",
          derivative=lambda z: 1 / (1 + z * z), **C),
    Unary("arctanh", "arctanh", ("ArcTanh",), np.arctanh, "d arctanh x = g / (1 - x^2)",
          derivative=lambda z: 1 / (1 - z * z), domain=UNIT, **C),
    Unary("ceil", "ceil", ("Ceil",), np.ceil, "d ceil x = 0 (jumps included: MLX's convention)",
          vjp=_zero_vjp, domain=Domain(-3.0, 3.0, ("integers",)), conventions=(JUMPS,), exact=True),
    Unary("floor", "floor", ("Floor",), np.floor, "d floor x = 0 (jumps included: MLX's convention)",
          vjp=_zero_vjp, domain=Domain(-3.0, 3.0, ("integers",)), conventions=(JUMPS,), exact=True),
    Unary("round", "round", ("Round",), np.round, "d round x = 0 (half-to-even jumps included: MLX's convention)",
          vjp=_zero_vjp, domain=Domain(-3.0, 3.0, ("halves",)), conventions=(HALF_JUMPS,), exact=True, **C),
    Unary("sign", "sign", ("Sign",), _complex_sign, "d sign x = 0 for real x (0 included); complex z: "
          "sign z = z/|z|, gradient (g - Re(conj(g) s) s) / |z|", vjp=_sign_vjp,
          domain=Domain(-3.0, 3.0, ("zero",)), conventions=(ZERO,), exact=True, complex_defect=COMPLEX_SIGN, **C),
    Unary("sin", "sin", ("Sin",), np.sin, "d sin x = cos(x) g", derivative=np.cos, **C),
    Unary("cos", "cos", ("Cos",), np.cos, "d cos x = -sin(x) g", derivative=lambda z: -np.sin(z), **C),
    Unary("tan", "tan", ("Tan",), np.tan, "d tan x = g / cos(x)^2",
          derivative=lambda z: 1 / np.cos(z) ** 2, domain=Domain(-0.8125, 0.8125), **C),
    Unary("sinh", "sinh", ("Sinh",), np.sinh, "d sinh x = cosh(x) g", derivative=np.cosh, **C),
    Unary("cosh", "cosh", ("Cosh",), np.cosh, "d cosh x = sinh(x) g", derivative=np.sinh, **C),
    Unary("tanh", "tanh", ("Tanh",), np.tanh, "d tanh x = g / cosh(x)^2",
          derivative=lambda z: 1 / np.cosh(z) ** 2, **C),
    Unary("erf", "erf", ("Erf",), erf, "d erf x = 2/sqrt(pi) exp(-x^2) g",
          derivative=lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x), domain=Domain(-2.5, 2.5), analytic=False),
    Unary("erfinv", "erfinv", ("ErfInv",), erfinv, "d erfinv x = sqrt(pi)/2 exp(erfinv(x)^2) g",
          derivative=lambda x: math.sqrt(math.pi) / 2 * np.exp(erfinv(x) ** 2), domain=UNIT, analytic=False),
    Unary("exp", "exp", ("Exp",), np.exp, "d exp x = exp(x) g", derivative=np.exp, **C),
    Unary("expm1", "expm1", ("Expm1",), np.expm1, "d expm1 x = exp(x) g", derivative=np.exp),
    Unary("log", "log", ("Log",), np.log, "d log x = g / x", derivative=lambda z: 1 / z, domain=POSITIVE, **C),
    Unary("log2", "log2", ("Log",), np.log2, "d log2 x = g / (x ln 2)",
          derivative=lambda z: 1 / (z * math.log(2.0)), domain=POSITIVE, **C),
    Unary("log10", "log10", ("Log",), np.log10, "d log10 x = g / (x ln 10)",
          derivative=lambda z: 1 / (z * math.log(10.0)), domain=POSITIVE, **C),
    Unary("log1p", "log1p", ("Log1p",), np.log1p, "d log1p x = g / (1 + x)",
          derivative=lambda z: 1 / (1 + z), domain=Domain(-0.4375, 3.0), **C),
    Unary("negative", "negative", ("Negative",), np.negative, "d(-x) = -g",
          derivative=lambda z: -_one(z), exact=True, multilinear=True, **C),
    Unary("sigmoid", "sigmoid", ("Sigmoid",), _sigmoid, "d sigmoid x = s (1 - s) g, s = sigmoid(x)",
          derivative=lambda x: _sigmoid(x) * (1 - _sigmoid(x)), domain=Domain(-4.0, 4.0)),
    Unary("sqrt", "sqrt", ("Sqrt",), np.sqrt, "d sqrt x = g / (2 sqrt x)",
          derivative=lambda z: 0.5 / np.sqrt(z), domain=POSITIVE, **C),
    Unary("rsqrt", "rsqrt", ("Sqrt",), lambda z: 1 / np.sqrt(z), "d x^(-1/2) = -g / (2 x^(3/2))",
          derivative=lambda z: -0.5 / (z * np.sqrt(z)), domain=POSITIVE, **C),
    Unary("square", "square", ("Square",), np.square, "d x^2 = 2 x g", derivative=lambda z: 2 * z, **C),
    Unary("conjugate", "conjugate", ("Conjugate",), np.conj, "d conj z = conj(g) (identity for real x)",
          vjp=_conj_vjp, exact=True, dtypes=("float32",), complex_first=True, **C),
    Unary("real", "real", ("Real",), np.real, "d Re z = g (a real cotangent, as complex)",
          vjp=_real_vjp, exact=True, real_output=True, dtypes=("float32",), complex_first=True, **C),
    Unary("imag", "imag", ("Imag",), np.imag, "d Im z = i g; 0 for a real input",
          vjp=_imag_vjp, exact=True, real_output=True, dtypes=("float32",), complex_first=True, **C),
)


# --- reference -------------------------------------------------------------------------------------

def _x(inp):
    return np.asarray(inp["a"])


def reference_of(row: Unary):
    def reference(inp, params):
        with np.errstate(all="ignore"):
            return np.asarray(row.forward(_x(inp)))
    return reference


def reference_vjp_of(row: Unary):
    def reference_vjp(inp, g, params):
        x, g = _x(inp), np.asarray(g)
        with np.errstate(all="ignore"):
            grad = row.vjp(x, g) if row.vjp is not None else g * np.conj(row.derivative(x))
        return {"a": np.asarray(grad).reshape(x.shape)}
    return reference_vjp


# --- catalog ---------------------------------------------------------------------------------------

def values_of(row: Unary, seed: int, dtype: str):
    """values_of(shape) -> values from the row's domain. complex64: both parts in
    +-[1/4, 3/4] (off every cut); a row with kinks along the real line (round's
    half-integers) takes both parts from its own grid, |part| >= 1/4."""
    if dtype == W.COMPLEX:
        grid = row.domain.grid()
        parts = grid[np.abs(grid) >= W.MARGIN] if row.domain.kinks else W.COMPLEX_PARTS
        return lambda shape: W.complex_values(shape, seed, parts)
    return lambda shape: row.domain.values(shape, seed)


def out_dtype(row: Unary, dtype: str) -> str:
    return "float32" if dtype == W.COMPLEX and row.real_output else dtype


# (name, logical shape, layout, all-ones cotangent): every row's catalog in its main dtype
# (float32; complex64 for the complex-first rows), then one scenario per other dtype.
LAYOUT_FORMS = (
    ("rank0", (), "contiguous", False),
    ("rank1", (5,), "contiguous", True),
    ("rank3/transposed", (2, 3, 4), "transposed", False),
    ("strided_reversed", (3, 4), "strided_reversed", False),
    ("broadcast_singleton", (3, 1, 4), "broadcast_singleton", False),
    ("empty", (0, 3), "contiguous", False),
)
DTYPE_FORMS = {"float16": ("transposed", (3, 4)), "bfloat16": ("strided", (3, 4)),
               W.COMPLEX: ("reversed", (3, 4)), "float32": ("contiguous", (5,))}


def forms(row: Unary) -> list:
    """(name, shape, layout, dtype, all-ones cotangent) of the row's catalog."""
    main = W.COMPLEX if row.complex_first else "float32"
    prefix = "" if main == "float32" else f"{main}/"
    out = [(prefix + name, shape, kind, main, ones) for name, shape, kind, ones in LAYOUT_FORMS]
    others = [d for d in row.dtypes if d in W.HALF] + ([W.COMPLEX] if row.complex else []) + ["float32"]
    for dtype in others:
        if dtype != main:
            kind, shape = DTYPE_FORMS[dtype]
            out.append((f"{dtype}/{kind}", shape, kind, dtype, False))
    return out


def _case(row, name, a, cot, desc, tags=()):
    return Scenario(name=f"unary/{row.name}/{name}", op=row.name, operands={"a": a}, wrt=("a",),
                    cotangent=cot, family="unary", defect_tags=tuple(tags), description=desc)


def scenarios_of(row: Unary):
    def scenarios() -> list:
        out = []
        for k, (name, shape, kind, dtype, ones) in enumerate(forms(row)):
            a = W.operand(values_of(row, 31 + k, dtype), shape, kind, dtype)
            cot = None if ones else W.cotangent_tensor(shape, 71 + k, out_dtype(row, dtype))
            tags = (row.complex_defect,) if dtype == W.COMPLEX and row.complex_defect else ()
            out.append(_case(row, name, a, cot, f"{kind} {dtype} operand of shape {shape}", tags))
        for name, vals, desc in row.conventions:
            out.append(_case(row, f"convention/{name}", tensor(vals), W.cotangent_tensor((len(vals),), 5, "float32"),
                             desc))
        return out
    return scenarios


# --- fuzz strategy ---------------------------------------------------------------------------------

def strategy_of(row: Unary):
    def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
        dtype = draw(D.choice(tuple(dtypes)))
        shape, kind = W.draw_shape_and_layout(draw)
        a = W.operand(values_of(row, draw(D.irange(0, 2**16)), dtype), shape, kind, dtype)
        cot, mode = W.draw_cotangent(draw, shape, out_dtype(row, dtype))
        return W.finish(Scenario(name="", op=row.name, operands={"a": a}, wrt=("a",), cotangent=cot,
                                 family="unary", description=f"generated: {kind} {dtype} {shape}, cotangent {mode}"))
    return fuzz_case


def call_expression_of(row: Unary):
    def call_expression(params, names) -> str:
        return E.call(f"mx.{row.call}", names["a"])
    return call_expression


def _known_defects(row: Unary) -> tuple:
    """The row's complex class: abs shows it at second order only (its first derivative is
    right), sign at first order."""
    if not row.complex_defect:
        return ()
    shown = "second_order" if row.name == "abs" else FIRST_ORDER_CHECKS
    return (KnownDefect(row.complex_defect, revealed_by=shown),)


def opinfo(row: Unary) -> OpInfo:
    return OpInfo(
        name=row.name, known_defects=_known_defects(row),
        summary=f"mx.{row.call}: the {'/'.join(row.primitives)} primitive, table-driven",
        operands=("a",), differentiable=("a",), reference=reference_of(row),
        reference_vjp=reference_vjp_of(row), exact=row.exact, multilinear=row.multilinear, rule=row.rule,
        analytic=row.derivative is not None if row.analytic is None else row.analytic,
        mlx_call=f"{REPRO}:{row.name}_call", call_expression=call_expression_of(row),
        scenarios=scenarios_of(row), strategy=strategy_of(row), primitives=row.primitives,
        dtypes=row.dtypes, complex=row.complex)


# --- astype (AsType) ---------------------------------------------------------------------------------

ASTYPE_TARGETS = ("float16", "bfloat16", "float32", "complex64")
ASTYPE_DOMAIN = Domain(-1.75, 1.75)   # x +- the differences' steps is exact in bfloat16 here


def astype_reference(inp, params):
    """The value cast to the target dtype, rounded as MLX rounds; complex64 to a real
    dtype keeps the real part (MLX documents nothing; 0.32.4 does that, as numpy's cast
    does with a ComplexWarning)."""
    x = _x(inp)
    if np.iscomplexobj(x) and params["to"] != W.COMPLEX:
        x = np.real(x)
    return as_seen(x, params["to"])


def astype_reference_vjp(inp, g, params):
    """The cotangent cast back (MLX's rule: rounding counts as the identity); from complex64
    to a real input the real part, as L = Re(conj(g) x) = Re(g) x; to a complex input the
    cotangent as it is (a real one with imaginary part 0: L = g Re(x) has no Im(x) term)."""
    x, g = _x(inp), np.asarray(g)
    if np.iscomplexobj(x):
        return {"a": g.astype(np.complex128).reshape(np.shape(x))}
    return {"a": np.real(g).reshape(np.shape(x))}


def astype_scenarios() -> list:
    out = []
    for k, to in enumerate(ASTYPE_TARGETS):
        for name, shape, kind, dtype in (("rank0", (), "contiguous", "float32"),
                                         ("strided", (3, 4), "strided", "float32"),
                                         ("float16/reversed", (2, 3), "reversed", "float16"),
                                         ("complex64/transposed", (2, 3), "transposed", W.COMPLEX)):
            if to == dtype:
                continue
            a = W.operand(_astype_values(41 + k, dtype), shape, kind, dtype)
            cot = W.cotangent_tensor(shape, 81 + k, to)
            out.append(Scenario(name=f"unary/astype/{to}/{name}", op="astype", operands={"a": a}, wrt=("a",),
                                params={"to": to}, cotangent=cot, family="unary",
                                description=f"cast {dtype} -> {to}: the cotangent cast back"))
    return out


def _astype_values(seed, dtype):
    """ASTYPE_DOMAIN's values; complex64: those as real parts, imaginary parts from it too."""
    if dtype == W.COMPLEX:
        return lambda s: ASTYPE_DOMAIN.values(s, seed) + 1j * ASTYPE_DOMAIN.values(s, seed + 1)
    return lambda s: ASTYPE_DOMAIN.values(s, seed)


def astype_fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(tuple(dtypes)))
    to = draw(D.choice(ASTYPE_TARGETS))
    shape, kind = W.draw_shape_and_layout(draw)
    seed = draw(D.irange(0, 2**16))
    a = W.operand(_astype_values(seed, dtype), shape, kind, dtype)
    cot, mode = W.draw_cotangent(draw, shape, to)
    return W.finish(Scenario(name="", op="astype", operands={"a": a}, wrt=("a",), params={"to": to},
                             cotangent=cot, family="unary",
                             description=f"generated: {kind} {dtype} {shape} -> {to}, cotangent {mode}"))


ASTYPE = OpInfo(
    name="astype", summary="x.astype(dtype): the AsType primitive, to half, float32 and complex64",
    operands=("a",), differentiable=("a",), reference=astype_reference, reference_vjp=astype_reference_vjp,
    exact=True, rule="d astype(x) = g cast back to x's dtype (the real part from complex64)",
    mlx_call=f"{REPRO}:astype_call",
    call_expression=lambda params, names: f"{names['a']}.astype(mx.{params['to']})",
    scenarios=astype_scenarios, strategy=astype_fuzz_case, primitives=("AsType",), dtypes=FLOATS,
    complex=True)


# --- identity (Copy) -----------------------------------------------------------------------------------

IDENTITY_ROW = Unary("identity", "identity", ("Copy",), lambda x: np.array(x, copy=True),
                     "d x = g: the Copy MLX's vjp makes of every differentiated input passes g on",
                     derivative=_one, exact=True, multilinear=True, **C)


def _identity_expression(params, names) -> str:
    return names["a"]


IDENTITY = OpInfo(
    name="identity", summary="the call returns its input: only the Copy primitive mx.vjp puts in front of it",
    operands=("a",), differentiable=("a",), reference=reference_of(IDENTITY_ROW),
    reference_vjp=reference_vjp_of(IDENTITY_ROW), exact=True, multilinear=True, rule=IDENTITY_ROW.rule,
    mlx_call=f"{REPRO}:identity_call", call_expression=_identity_expression,
    scenarios=scenarios_of(IDENTITY_ROW), strategy=strategy_of(IDENTITY_ROW), primitives=("Copy",),
    dtypes=FLOATS, complex=True)


OPS = tuple(opinfo(row) for row in UNARY) + (ASTYPE, IDENTITY)
