"""The binary elementwise ops, one OpInfo per MLX primitive, from one table (BINARY).

Each row names MLX's function, the primitives its calls exercise (Broadcast
too: MLX broadcasts operands of different shapes before the op, and the
catalog does), the float64 forward (numpy; complex128 where the op takes
complex64), the VJP on the broadcast operands (summed back to each operand's
shape here), and the Domain of each operand (_support/elementwise.py). Kinks
are kept away by construction: maximum and minimum draw a from the integers
and b from the half-integers (never tied, |a - b| >= 1/2); remainder and
divmod draw a from the odd halves and b from +-1, +-2 (a / b is a quarter
from every integer: the jumps of a - b floor(a / b) are far); divide's b stays
1 from 0 and arctan2's b 1/2 (so core/numeric.py's differences decide there too).

At a tie MLX's maximum gives the whole cotangent to b (a > b picks a, else
b) and minimum too (a < b picks a, else b); power at a = 0 takes 0 log 0 as
0. The references follow, and the catalog runs those points as
".../convention/..." scenarios. divmod returns (a // b, a % b): its part
param picks which output is differentiated; the remainder's gradient is that
of remainder. MLX's calls are ops/repro/binary.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import tensor
from ._support import expression as E
from ._support import elementwise as W
from ._support.elementwise import Domain

FLOATS = ("float32", "float16", "bfloat16")
REPRO = ".ops.repro.binary"
# Defect classes found by this table (see the Findings table).
COMPLEX_POWER = "complex_power_unconjugated"    # Power::vjp does not conjugate for complex64
COMPLEX_LOGADDEXP = "complex_logaddexp_vjp_raises"   # forward works, the VJP needs a complex sigmoid
DIVMOD_REMAINDER = "divmod_remainder_zero_grad"  # DivMod::vjp gives zeros for the remainder output


@dataclass(frozen=True)
class Binary:
    # Identity: the op's name, MLX's function (mx.<call>), the primitives its calls exercise.
    name: str
    call: str
    primitives: tuple
    # The float64 reference: forward(a, b) (numpy, broadcasting; complex128 where the op
    # takes complex) and vjp(a, b, g) -> (da, db) on the broadcast operands, both numpy.
    forward: Callable
    vjp: Callable
    rule: str
    # Where each operand's values come from; the dtypes MLX takes; complex64 with a VJP.
    a: Domain = Domain(-3.0, 3.0)
    b: Domain = Domain(-3.0, 3.0)
    dtypes: tuple = FLOATS
    complex: bool = False
    # Convention points: (name, a values, b values, differentiated operands, what MLX does).
    conventions: tuple = ()
    # exact: float32 is exact on grid values; multilinear: linear in each operand (core/opinfo.py).
    exact: bool = False
    multilinear: bool = False
    # Defect class of its complex64 scenarios, where MLX 0.32.4 is known wrong there.
    complex_defect: str = ""

    def __post_init__(self):
        if not self.dtypes or not set(self.dtypes) <= set(FLOATS):
            raise ValueError(f"Binary {self.name!r}: field dtypes {self.dtypes!r} must be a subset of {FLOATS}")
        if not all(isinstance(c, tuple) and len(c) == 5 and set(c[3]) <= {"a", "b"} for c in self.conventions):
            raise ValueError(f"Binary {self.name!r}: field conventions holds (name, a, b, wrt, description)")


# --- rules on the broadcast operands ----------------------------------------------------------------

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _power_vjp(a, b, g):
    """d/da = b a^(b-1), d/db = a^b log a (0 where a^b = 0: MLX takes 0 log 0 as 0), conjugated."""
    y = np.power(a, b)
    db = np.where(y == 0, 0.0, y * np.log(np.where(y == 0, 1.0, a)))
    return g * np.conj(b * np.power(a, b - 1)), g * np.conj(db)


def _remainder_vjp(a, b, g):
    return g, -np.floor(a / b) * g


def _zero_vjp(a, b, g):
    return np.zeros(np.shape(g)), np.zeros(np.shape(g))


def _logaddexp(a, b):
    return np.log(np.exp(a) + np.exp(b))


def _logaddexp_vjp(a, b, g):
    s = _sigmoid(a - b)
    return g * np.conj(s), g * np.conj(1 - s)


def _arctan2_vjp(a, b, g):
    d = a * a + b * b
    return g * b / d, -g * a / d


INTEGERS = Domain(-3.0, 3.0, ("halves",), margin=0.5)       # -3..3
HALVES = Domain(-3.5, 3.5, ("integers",), margin=0.5)       # -3.5, -2.5, ..., 3.5
DIVISORS = Domain(-2.0, 2.0, ("halves", "zero"), margin=0.5)   # -2, -1, 1, 2
TIES = ("ties", [1.0, -2.0, 0.5], [1.0, -2.0, 0.5], ("a", "b"), "a == b: MLX gives the whole cotangent to b")
C = dict(complex=True)

BINARY = (
    Binary("add", "add", ("Add", "Broadcast"), np.add, lambda a, b, g: (g, g), "d(a + b) = (g, g)",
           exact=True, multilinear=True, **C),
    Binary("subtract", "subtract", ("Subtract", "Broadcast"), np.subtract, lambda a, b, g: (g, -g),
           "d(a - b) = (g, -g)", exact=True, multilinear=True, **C),
    Binary("multiply", "multiply", ("Multiply", "Broadcast"), np.multiply,
           lambda a, b, g: (g * np.conj(b), g * np.conj(a)), "d(a b) = (g conj(b), g conj(a))",
           exact=True, multilinear=True, **C),
    Binary("divide", "divide", ("Divide", "Broadcast"), np.divide,
           lambda a, b, g: (g / np.conj(b), -g * np.conj(a / (b * b))), "d(a / b) = (g / conj(b), -g conj(a / b^2))",
           b=Domain(-3.0, 3.0, ("zero",), margin=1.0), **C),
    Binary("power", "power", ("Power", "Broadcast"), np.power, _power_vjp,
           "d a^b = (g conj(b a^(b-1)), g conj(a^b log a)); 0 log 0 taken as 0",
           a=Domain(0.5, 2.5), b=Domain(-2.0, 2.0), complex_defect=COMPLEX_POWER, conventions=(
               ("zero_base", [0.0, 0.0, 0.0], [2.0, 3.0, 1.5], ("a", "b"),
                "a = 0: d/db = 0 (MLX takes 0 log 0 as 0), d/da = b 0^(b-1) = 0"),
               ("negative_base", [-1.5, -2.0, -0.5], [2.0, 3.0, -1.0], ("a",),
                "a < 0, integer b: only a is differentiated (log a is not real)")), **C),
    Binary("remainder", "remainder", ("Remainder", "Broadcast"), np.remainder, _remainder_vjp,
           "a % b = a - b floor(a / b) (the divisor's sign): d = (g, -floor(a / b) g)", a=HALVES, b=DIVISORS),
    Binary("maximum", "maximum", ("Maximum", "Broadcast"), np.maximum,
           lambda a, b, g: (g * (a > b), g * (a <= b)), "d max(a, b) = g to a where a > b, else to b (ties: b)",
           a=INTEGERS, b=HALVES, conventions=(TIES,), exact=True, **C),
    Binary("minimum", "minimum", ("Minimum", "Broadcast"), np.minimum,
           lambda a, b, g: (g * (a < b), g * (a >= b)), "d min(a, b) = g to a where a < b, else to b (ties: b)",
           a=INTEGERS, b=HALVES, conventions=(TIES,), exact=True, **C),
    Binary("logaddexp", "logaddexp", ("LogAddExp", "Broadcast"), _logaddexp, _logaddexp_vjp,
           "d log(e^a + e^b) = (g conj(s), g conj(1 - s)), s = sigmoid(a - b)",
           complex_defect=COMPLEX_LOGADDEXP, **C),
    Binary("arctan2", "arctan2", ("ArcTan2", "Broadcast"), np.arctan2, _arctan2_vjp,
           "d atan2(a, b) = (g b, -g a) / (a^2 + b^2)", a=Domain(-2.0, 2.0), b=Domain(0.5, 3.0)),
)

# divmod: one row per output, the part param picks it.
DIVMOD_PARTS = (
    Binary("divmod", "divmod", ("DivMod", "Broadcast"), lambda a, b: np.floor(a / b), _zero_vjp,
           "divmod(a, b) = (floor(a / b), a - b floor(a / b)): d quotient = 0, d remainder = (g, -floor(a / b) g)",
           a=HALVES, b=DIVISORS),
    Binary("divmod", "divmod", ("DivMod", "Broadcast"), np.remainder, _remainder_vjp,
           "divmod(a, b) = (floor(a / b), a - b floor(a / b)): d quotient = 0, d remainder = (g, -floor(a / b) g)",
           a=HALVES, b=DIVISORS),
)


# --- reference -------------------------------------------------------------------------------------

def reference_of(row_for):
    """row_for(params) -> the row whose functions apply (divmod: its part's)."""
    def reference(inp, params):
        with np.errstate(all="ignore"):
            return np.asarray(row_for(params).forward(np.asarray(inp["a"]), np.asarray(inp["b"])))
    return reference


def reference_vjp_of(row_for):
    def reference_vjp(inp, g, params):
        a, b = np.asarray(inp["a"]), np.asarray(inp["b"])
        ab = np.broadcast_arrays(a, b, np.asarray(g))
        with np.errstate(all="ignore"):
            da, db = row_for(params).vjp(*ab)
        return {"a": W.unbroadcast(np.asarray(da), a.shape), "b": W.unbroadcast(np.asarray(db), b.shape)}
    return reference_vjp


# --- catalog ---------------------------------------------------------------------------------------

# Zero-size calls: MLX 0.32.4 on the CPU hangs, now and then, summing over an axis of length 0 of an array made
# from host memory (mx.sum(mx.array(np.zeros((0, 3), np.float32)), axis=0) spins in about a
# third of processes): the VJP of an operand broadcast to a zero-size output is such a sum,
# and a hang stops `run` (the runner has no per-scenario time limit). So zero-size calls
# keep both operands at the output's shape, in the catalog and in the strategy.

# (name, (a shape, a layout), (b shape, b layout), dtype, wrt, all-ones cotangent)
FORMS = (
    ("rank0", ((), "contiguous"), ((), "contiguous"), "float32", ("a", "b"), False),
    ("rank0_with_rank2", ((), "contiguous"), ((3, 4), "contiguous"), "float32", ("a", "b"), False),
    ("rank1", ((5,), "contiguous"), ((5,), "contiguous"), "float32", ("a", "b"), True),
    ("rank3/transposed", ((2, 3, 4), "transposed"), ((2, 3, 4), "contiguous"), "float32", ("a", "b"), False),
    ("strided_reversed", ((3, 4), "strided_reversed"), ((3, 4), "reversed"), "float32", ("a", "b"), False),
    ("broadcast_singleton", ((3, 1, 4), "broadcast_singleton"), ((2, 4), "contiguous"), "float32", ("a", "b"), False),
    ("wrt_b", ((4,), "contiguous"), ((3, 4), "strided"), "float32", ("b",), False),
    ("empty", ((0, 3), "contiguous"), ((0, 3), "transposed"), "float32", ("a", "b"), False),
    ("float16/transposed", ((3, 4), "transposed"), ((3, 4), "contiguous"), "float16", ("a", "b"), False),
    ("bfloat16/strided", ((3, 4), "strided"), ((4,), "contiguous"), "bfloat16", ("a", "b"), False),
    ("complex64/reversed", ((3, 4), "reversed"), ((3, 4), "transposed"), W.COMPLEX, ("a", "b"), False),
)


def values_of(domain: Domain, seed: int, dtype: str):
    if dtype == W.COMPLEX:
        return lambda shape: W.complex_values(shape, seed)
    return lambda shape: domain.values(shape, seed)


def out_shape(a_shape, b_shape) -> tuple:
    return tuple(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))


def _case(row, name, a, b, wrt, cot, params, desc, tags=()):
    return Scenario(name=f"binary/{row.name}/{name}", op=row.name, operands={"a": a, "b": b}, wrt=tuple(wrt),
                    params=dict(params), cotangent=cot, family="binary", defect_tags=tuple(tags), description=desc)


def form_case(row, k, form, params=(), tag="") -> Scenario | None:
    """One catalog form of a row (None where the row does not take its dtype)."""
    name, (sa, ka), (sb, kb), dtype, wrt, ones = form
    if (dtype == W.COMPLEX and not row.complex) or (dtype in W.HALF and dtype not in row.dtypes):
        return None
    a = W.operand(values_of(row.a, 131 + k, dtype), sa, ka, dtype)
    b = W.operand(values_of(row.b, 171 + k, dtype), sb, kb, dtype)
    shape = out_shape(sa, sb)
    cot = None if ones else W.cotangent_tensor(shape, 211 + k, dtype)
    tags = (row.complex_defect,) if dtype == W.COMPLEX and row.complex_defect else ((tag,) if tag else ())
    return _case(row, name, a, b, wrt, cot, dict(params), f"a {ka} {sa}, b {kb} {sb}, {dtype}", tags)


def convention_cases(row) -> list:
    return [_case(row, f"convention/{name}", tensor(a), tensor(b), wrt,
                  W.cotangent_tensor((len(a),), 7, "float32"), {}, desc)
            for name, a, b, wrt, desc in row.conventions]


def scenarios_of(row):
    def scenarios() -> list:
        made = [form_case(row, k, form) for k, form in enumerate(FORMS)]
        return [s for s in made if s is not None] + convention_cases(row)
    return scenarios


# --- fuzz strategy ---------------------------------------------------------------------------------

def draw_operand(draw, domain, shape, dtype) -> tuple:
    """(Tensor, layout, its shape): an operand of a shape broadcasting to `shape`;
    never broadcast to a zero-size output (the note above FORMS)."""
    own = shape if 0 in shape else D.broadcast_variant(draw, shape)
    kind = draw(D.choice(W.LAYOUTS))
    kind = kind if W.layout_possible(kind, own) else "contiguous"
    seed = draw(D.irange(0, 2**16))
    return W.operand(values_of(domain, seed, dtype), own, kind, dtype), kind, own


def draw_call(draw, row, dtypes, params=None) -> Scenario:
    """A call of the row: drawn dtype, output shape, each operand's broadcast shape and
    layout, the differentiated subset and the cotangent."""
    dtype = draw(D.choice(tuple(dtypes)))
    shape = W.draw_shape(draw)
    a, ka, sa = draw_operand(draw, row.a, shape, dtype)
    b, kb, sb = draw_operand(draw, row.b, shape, dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "b")))))
    cot, mode = W.draw_cotangent(draw, out_shape(sa, sb), dtype)
    return W.finish(Scenario(name="", op=row.name, operands={"a": a, "b": b}, wrt=wrt, params=params or {},
                             cotangent=cot, family="binary",
                             description=f"generated: a {ka} {sa}, b {kb} {sb}, {dtype}, "
                                         f"wrt {'+'.join(wrt)}, cotangent {mode}"))


def strategy_of(row):
    def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
        return draw_call(draw, row, dtypes)
    return fuzz_case


def call_expression_of(row):
    def call_expression(params, names) -> str:
        return E.call(f"mx.{row.call}", names["a"], names["b"])
    return call_expression


def opinfo(row: Binary) -> OpInfo:
    return OpInfo(
        name=row.name, known_defects=(KnownDefect(row.complex_defect),) if row.complex_defect else (),
        summary=f"mx.{row.call}: the {row.primitives[0]} primitive, broadcasting, table-driven",
        operands=("a", "b"), differentiable=("a", "b"), reference=reference_of(lambda p: row),
        reference_vjp=reference_vjp_of(lambda p: row), exact=row.exact, multilinear=row.multilinear,
        rule=row.rule, mlx_call=f"{REPRO}:{row.name}_call", call_expression=call_expression_of(row),
        scenarios=scenarios_of(row), strategy=strategy_of(row), primitives=row.primitives,
        dtypes=row.dtypes, complex=row.complex)


# --- divmod: (quotient, remainder), the part param picks the output --------------------------------

def _divmod_row(params) -> Binary:
    return DIVMOD_PARTS[int(params.get("part", 1))]


def divmod_scenarios() -> list:
    """Every form for the remainder (the defect's output), the plain ones for the quotient."""
    out = []
    for k, form in enumerate(FORMS):
        for part, label in ((1, "remainder"), (0, "quotient")):
            if part == 0 and form[0] not in ("rank0", "rank1", "broadcast_singleton", "float16/transposed"):
                continue
            tag = DIVMOD_REMAINDER if part and form[0] != "empty" else ""   # no element, nothing wrong
            s = form_case(DIVMOD_PARTS[part], k, form, {"part": part}, tag)
            if s is not None:
                out.append(Scenario.from_dict(dict(s.to_dict(), name=f"binary/divmod/{label}/{form[0]}")))
    return out


def divmod_fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    part = draw(D.choice((0, 1)))
    return draw_call(draw, DIVMOD_PARTS[part], dtypes, {"part": part})


DIVMOD = OpInfo(
    name="divmod", summary="mx.divmod(a, b)[part]: the DivMod primitive, quotient and remainder outputs",
    operands=("a", "b"), differentiable=("a", "b"), reference=reference_of(_divmod_row),
    reference_vjp=reference_vjp_of(_divmod_row), exact=True, rule=DIVMOD_PARTS[1].rule,
    mlx_call=f"{REPRO}:divmod_call",
    call_expression=lambda params, names: f"mx.divmod({names['a']}, {names['b']})[{int(params.get('part', 1))}]",
    scenarios=divmod_scenarios, strategy=divmod_fuzz_case, primitives=("DivMod", "Broadcast"), dtypes=FLOATS,
    known_defects=(KnownDefect(DIVMOD_REMAINDER, when="part"),))


OPS = tuple(opinfo(row) for row in BINARY) + (DIVMOD,)
