"""Comparisons, logical ops, bitwise ops and select: one OpInfo per MLX primitive,
from one table (COMPARE) plus bitwise and where.

A comparison's own VJP is zero (MLX's Equal::vjp ... LessEqual::vjp return zeros,
so do LogicalAnd/Or/Not and BitwiseBinary), so each is tested as MLX uses it:
inside a differentiable graph. The "select" form differentiates
where(cond(a, b), a, -b): the Select primitive routes g to a where the condition
holds and -g to b elsewhere, and the comparison's VJP runs on the way (MLX
calls it with the condition's cotangent). The "own" form differentiates the
condition itself (a bool output): its gradients must be zero, and the
broadcast catalog form checks they come back in each operand's shape. The
logical ops compare with 0 first (logical_and(a > 0, b > 0)), as real code
does; bitwise ops run on the operands cast to int32 and cast the result back
(bitwise_and(int(a), int(b)) as a float: piecewise constant, gradient 0).
`where` is Select with a fixed bool mask (an integer operand). Scenarios that
differentiate b alone leave a unbatched under the vmap oracle, where MLX 0.32.4's
NotEqual and BitwiseBinary vmap rules are wrong (tagged defect classes).
`array_equal` is the one call that gives the Equal primitive its equal_nan flag
(array_equal(a, b, equal_nan=True): Equal with NaN == NaN, then all). It compares
m(a) and m(b), m marking negative entries missing (NaN), as real code marks
missing values: the operands, the output and the gradients stay finite, and the
condition is true exactly when a and b agree where both are non-negative and are
negative in the same places. Equal::vmap rebuilds the comparison without the
flag, so under vmap arrays with markers in the same places compare unequal
(tagged; an equal pair is a tie, so these run as ".../convention/..." scenarios).

Complex input (complex64; the comparison rows, not bitwise): MLX documents no
order for complex values; 0.32.4 compares them lexicographically (real part,
then imaginary part; -0.0 and 0.0 are equal real parts), exactly as numpy's
comparisons do, so the references are unchanged (complex128) and the select
form routes g unconjugated (tests/ops/test_comparison.py pins both). Complex
rows: twins of four real forms (the domains' values as real parts: never
tied), exact ties under ".../convention/ties/complex64", and for the ordered
comparisons ".../convention/real_part_tie/complex64" (equal real parts, the
imaginary part decides, the select form jumps under a real perturbation);
equal and not_equal read both parts, so their "real_part_tie/complex64" rows
are smooth and every oracle judges them.

Values never tie (a from the integers, b from the half-integers; the logical
ops' operands 1/2 from 0; bitwise operands 1/2 from every integer, where the
cast jumps). At a tie the select form jumps (a on one side, -b on the other),
so only the branch MLX's forward picked has a derivative: the references give
g to the branch the condition picks, and the catalog runs the ties as
".../convention/..." scenarios. MLX's calls are ops/repro/comparison.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core import draw as D
from ..core import layout
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import integer_tensor, tensor
from ._support import elementwise as W
from ._support.elementwise import Domain

FLOATS = ("float32", "float16", "bfloat16")
REPRO = ".ops.repro.comparison"
# A defect class found by this table (see the Findings table): NotEqual::vmap returns the
# input axes instead of the output's, so under vmap with a unbatched and b batched the
# output is taken as unbatched (the VJP for b comes back in the broadcast shape).
NOT_EQUAL_VMAP = "not_equal_vmap_out_axes"
# A defect class of MLX 0.32.4: Equal::vmap calls equal(a, b) without equal_nan, so under
# vmap array_equal(a, b, equal_nan=True) of arrays with NaN in the same places is False.
EQUAL_NAN_VMAP = "equal_nan_vmap"
FORMS_OF_CALL = ("select", "own")
INTEGERS = Domain(-3.0, 3.0, ("halves",), margin=0.5)        # -3..3
HALVES = Domain(-3.5, 3.5, ("integers",), margin=0.5)        # -3.5..3.5, never an integer
NONZERO = Domain(-3.0, 3.0, ("zero",), margin=0.5)           # the logical ops compare with 0


@dataclass(frozen=True)
class Compare:
    # Identity: the op's name, the MLX condition over operand names {a} and {b} (one
    # expression), the primitives its calls exercise.
    name: str
    condition: str
    primitives: tuple
    # The condition in float64: cond(a, b) -> bool array (numpy, broadcasting).
    cond: Callable
    rule: str
    # Where the operands' values come from; logical_not reads a alone (b only in "select").
    a: Domain = INTEGERS
    b: Domain = HALVES
    unary: bool = False
    # The ties (or zeros): (a values, b values), where the condition decides alone.
    ties: tuple = ([1.0, -2.0, 0.5, 3.0], [1.0, -2.0, 0.5, 3.0])
    # Defect class of the calls that differentiate b alone (so that under vmap a is not
    # batched and b is), where MLX 0.32.4 is known wrong there.
    b_alone_defect: str = ""
    # Defect class of the calls whose operands hold NaN in the same places (a row whose
    # condition treats NaN as equal); "" adds no such scenarios.
    nan_defect: str = ""

    def __post_init__(self):
        if "{a}" not in self.condition or (("{b}" in self.condition) == self.unary):
            raise ValueError(f"Compare {self.name!r}: field condition must use {{a}}, and {{b}} unless unary")
        if len(self.ties) != 2 or len(self.ties[0]) != len(self.ties[1]):
            raise ValueError(f"Compare {self.name!r}: field ties holds two value lists of one length")


def _cmp(name):
    return dict(condition=f"mx.{name}({{a}}, {{b}})", primitives=(_PRIM[name], "Select", "Negative", "Broadcast"))


_PRIM = {"equal": "Equal", "not_equal": "NotEqual", "greater": "Greater", "greater_equal": "GreaterEqual",
         "less": "Less", "less_equal": "LessEqual"}
_ZEROS = ([0.0, 1.0, -1.0, 0.0], [1.0, 0.0, 2.0, 0.0])
# array_equal's operands with their negative entries marked missing (NaN): in MLX, and in float64.
_MISSING = "mx.where({x} < 0, mx.nan, {x})"


def _missing(x):
    return np.where(np.asarray(x) < 0, np.nan, x)

COMPARE = (
    Compare("equal", cond=np.equal, rule="where(a == b, a, -b): (g, 0) where equal, (0, -g) elsewhere; "
            "d(a == b) = 0", **_cmp("equal")),
    Compare("not_equal", cond=np.not_equal, rule="where(a != b, a, -b): (g, 0) where different, else (0, -g); "
            "d(a != b) = 0", b_alone_defect=NOT_EQUAL_VMAP, **_cmp("not_equal")),
    Compare("greater", cond=np.greater, rule="where(a > b, a, -b): (g, 0) where a > b, else (0, -g) "
            "(ties: -b); d(a > b) = 0", **_cmp("greater")),
    Compare("greater_equal", cond=np.greater_equal, rule="where(a >= b, a, -b): (g, 0) where a >= b, else "
            "(0, -g) (ties: a); d(a >= b) = 0", **_cmp("greater_equal")),
    Compare("less", cond=np.less, rule="where(a < b, a, -b): (g, 0) where a < b, else (0, -g) (ties: -b); "
            "d(a < b) = 0", **_cmp("less")),
    Compare("less_equal", cond=np.less_equal, rule="where(a <= b, a, -b): (g, 0) where a <= b, else (0, -g) "
            "(ties: a); d(a <= b) = 0", **_cmp("less_equal")),
    Compare("array_equal", "mx.array_equal(" + _MISSING.format(x="{a}") + ", " + _MISSING.format(x="{b}")
            + ", equal_nan=True)", ("Equal", "Reduce", "Select", "Less", "Negative", "Broadcast"),
            lambda a, b: np.array_equal(_missing(a), _missing(b), equal_nan=True),
            "where(array_equal(m(a), m(b), NaN == NaN), a, -b), m(x) = NaN where x < 0: (g, 0) everywhere "
            "when m(a) and m(b) are equal (the same shape), else (0, -g); the condition's gradient is 0",
            b=Domain(0.5, 3.5, ("integers",), margin=0.5), ties=([1.0, 2.0, 0.5, 3.0], [1.0, 2.0, 0.5, 3.0]),
            nan_defect=EQUAL_NAN_VMAP),
    Compare("logical_and", "mx.logical_and({a} > 0, {b} > 0)", ("LogicalAnd", "Greater", "Select", "Negative"),
            lambda a, b: (a > 0) & (b > 0), "where(a > 0 and b > 0, a, -b): (g, 0) where both are positive, "
            "else (0, -g); the condition's gradient is 0", a=NONZERO, b=NONZERO, ties=_ZEROS),
    Compare("logical_or", "mx.logical_or({a} > 0, {b} > 0)", ("LogicalOr", "Greater", "Select", "Negative"),
            lambda a, b: (a > 0) | (b > 0), "where(a > 0 or b > 0, a, -b): (g, 0) where either is positive, "
            "else (0, -g); the condition's gradient is 0", a=NONZERO, b=NONZERO, ties=_ZEROS),
    Compare("logical_not", "mx.logical_not({a} > 0)", ("LogicalNot", "Greater", "Select", "Negative"),
            lambda a, b: ~(a > 0), "where(not a > 0, a, -b): (g, 0) where a <= 0, else (0, -g); the "
            "condition's gradient is 0", a=NONZERO, b=NONZERO, unary=True, ties=_ZEROS),
)


# --- reference: the select form where(cond, a, -b), or the condition itself ----------------------

def _operands(inp):
    a = np.asarray(inp["a"])
    return a, (np.asarray(inp["b"]) if "b" in inp else None)


def reference_of(row: Compare):
    def reference(inp, params):
        a, b = _operands(inp)
        c = row.cond(a, a if b is None else b)
        if params.get("form") == "own":
            return np.asarray(c, dtype=np.float64)
        return np.where(c, a, -b)
    return reference


def reference_vjp_of(row: Compare):
    def reference_vjp(inp, g, params):
        a, b = _operands(inp)
        g = np.asarray(g)
        if params.get("form") == "own":
            out = {"a": np.zeros(a.shape)}
            return out if b is None else dict(out, b=np.zeros(b.shape))
        c = np.broadcast_to(row.cond(a, b), g.shape)
        return {"a": W.unbroadcast(np.where(c, g, 0.0), a.shape), "b": W.unbroadcast(np.where(c, 0.0, -g), b.shape)}
    return reference_vjp


# --- catalog ---------------------------------------------------------------------------------------

# (name, form, (a shape, a layout), (b shape, b layout), dtype, wrt, all-ones cotangent)
FORMS = (
    ("rank0", "select", ((), "contiguous"), ((), "contiguous"), "float32", ("a", "b"), False),
    ("rank1", "select", ((5,), "contiguous"), ((5,), "contiguous"), "float32", ("a", "b"), True),
    ("strided_reversed/wrt_a", "select", ((3, 4), "strided_reversed"), ((3, 4), "reversed"), "float32", ("a",),
     False),
    ("broadcast_singleton", "select", ((3, 1, 4), "broadcast_singleton"), ((2, 4), "contiguous"), "float32",
     ("a", "b"), False),
    ("empty", "select", ((0, 3), "contiguous"), ((0, 3), "transposed"), "float32", ("a", "b"), False),
    ("float16/rank3/transposed", "select", ((2, 3, 4), "transposed"), ((2, 3, 4), "contiguous"), "float16",
     ("a", "b"), False),
    ("bfloat16/strided/wrt_b", "select", ((3, 4), "strided"), ((4,), "contiguous"), "bfloat16", ("b",), False),
    ("own/broadcast/wrt_b", "own", ((3, 1), "contiguous"), ((4,), "strided"), "float32", ("b",), False),
)


def _values(domain: Domain, seed: int, dtype: str = "float32"):
    """The domain's values; complex64: those as real parts (so real parts never tie where
    the real values do not) and small nonzero integer imaginary parts."""
    if dtype == W.COMPLEX:
        return lambda shape: domain.values(shape, seed) + 1j * W.cotangent_values(shape, seed + 7, False)
    return lambda shape: domain.values(shape, seed)


def _scenario(row, name, operands, wrt, cot, form, desc) -> Scenario:
    tags = (row.b_alone_defect,) if row.b_alone_defect and tuple(wrt) == ("b",) else ()
    return Scenario(name=f"compare/{row.name}/{name}", op=row.name, operands=operands, wrt=tuple(wrt),
                    params={"form": form}, cotangent=cot, family="compare", defect_tags=tags, description=desc)


def form_case(row: Compare, k: int, form) -> Scenario:
    name, call_form, (sa, ka), (sb, kb), dtype, wrt, ones = form
    a = W.operand(_values(row.a, 301 + k, dtype), sa, ka, dtype)
    operands = {"a": a}
    if not (row.unary and call_form == "own"):
        operands["b"] = W.operand(_values(row.b, 331 + k, dtype), sb, kb, dtype)
    # the output's shape from the reference (array_equal's own form is 0-d)
    shape = np.shape(reference_of(row)({n: layout.logical(t) for n, t in operands.items()}, {"form": call_form}))
    wrt = tuple(w for w in wrt if w in operands) or ("a",)
    cot = None if ones else W.cotangent_tensor(shape, 361 + k, _cot_dtype(dtype, call_form))
    return _scenario(row, name, operands, wrt, cot, call_form, f"{call_form}: a {ka} {sa}, b {kb} {sb}, {dtype}")


def _cot_dtype(dtype, form) -> str:
    """The cotangent's dtype: the call's, but float32 for the own form of a complex call
    (its output is a bool condition)."""
    return "float32" if dtype == W.COMPLEX and form == "own" else dtype


def scenarios_of(row: Compare):
    def scenarios() -> list:
        out = [form_case(row, k, form) for k, form in enumerate(FORMS)]
        a, b = (tensor(v) for v in row.ties)
        out.append(_scenario(row, "convention/ties", {"a": a, "b": b}, ("a", "b"),
                             W.cotangent_tensor((len(row.ties[0]),), 9, "float32"), "select",
                             "at ties (zeros for the logical ops) the select form jumps: g goes to the branch "
                             "the condition picks"))
        return out + (nan_cases(row) if row.nan_defect else []) + complex_cases(row)
    return scenarios


# complex64 forms (name, form, (a shape, layout), (b shape, layout), dtype, wrt, all-ones cotangent):
# the domains' values as real parts (never tied, as in the real forms), imaginary parts added
COMPLEX_FORMS = (
    ("rank1/complex64", "select", ((5,), "contiguous"), ((5,), "contiguous"), W.COMPLEX, ("a", "b"), False),
    ("broadcast_singleton/complex64", "select", ((3, 1, 4), "broadcast_singleton"), ((2, 4), "contiguous"),
     W.COMPLEX, ("a", "b"), False),
    ("strided_reversed/wrt_a/complex64", "select", ((3, 4), "strided_reversed"), ((3, 4), "reversed"), W.COMPLEX,
     ("a",), False),
    ("own/broadcast/wrt_b/complex64", "own", ((3, 1), "contiguous"), ((4,), "strided"), W.COMPLEX, ("b",), False),
)
# complex ties: exact (both parts equal), and real parts equal with the imaginary part deciding
# (MLX's lexicographic order; -0.0 and 0.0 are equal real parts); the logical ops' against 0
# (no negative entries: array_equal marks those missing, NaN, and NaN pairs under vmap are a
# known defect class of their own, EQUAL_NAN_VMAP)
COMPLEX_TIES = ([1 + 2j, 2 - 1j, 0.5 + 0.5j, 3 + 0j], [1 + 2j, 2 - 1j, 0.5 + 0.5j, 3 + 0j])
REAL_PART_TIES = ([1 + 2j, -2 - 1j, complex(-0.0, 1.0), 3 + 0j, 2 - 3j],
                  [1 - 1j, -2 + 3j, 0 - 2j, 3 + 1j, 2 - 3j])
ZERO_REAL_PARTS = ([0 + 1j, complex(-0.0, -1.0), 1 + 0j, 0 - 2j], [0 - 1j, 0 + 2j, complex(-0.0, 1.0), 2 + 1j])
ORDERED = ("greater", "greater_equal", "less", "less_equal")


def complex_cases(row: Compare) -> list:
    """complex64: twins of real forms (real parts never tie: every oracle decides), exact
    ties, and where the condition orders by real part first (the ordered comparisons, and
    the logical ops' comparisons with 0) rows whose real parts tie, where the select form
    jumps under a real perturbation: conventions (g to the branch MLX's lexicographic
    condition picks). Equality reads both parts, so equal real parts with different
    imaginary parts are no tie for equal, not_equal and array_equal."""
    out = [form_case(row, 20 + k, form) for k, form in enumerate(COMPLEX_FORMS)]
    logical = row.a.kinks == ("zero",)
    ties = [("convention/ties/complex64", ZERO_REAL_PARTS if logical else COMPLEX_TIES)]
    if row.name in ORDERED:
        ties.append(("convention/real_part_tie/complex64", REAL_PART_TIES))
    elif row.name in ("equal", "not_equal"):   # locally constant there: differentiable, every oracle decides
        ties.append(("real_part_tie/complex64", tuple(v[:4] for v in REAL_PART_TIES)))
    for k, (name, (a, b)) in enumerate(ties):
        out.append(_scenario(row, name, {"a": tensor(a, dtype=W.COMPLEX), "b": tensor(b, dtype=W.COMPLEX)},
                             ("a", "b"), W.cotangent_tensor((len(a),), 40 + k, W.COMPLEX), "select",
                             "complex ties (real parts against 0 for the logical ops): the condition "
                             "decides by MLX's lexicographic order, the select form jumps there"))
    return out


# (name, a, b, wrt, tagged): negative entries, which the row's condition marks NaN; where
# they sit in the same places (the rest equal) a condition that treats NaN as equal holds (a
# tie: the select form jumps), elsewhere it does not.
NAN_FORMS = (
    ("nan_same_places", [1.0, -1.0, 2.0, -3.0], [1.0, -2.0, 2.0, -0.5], ("a", "b"), True),
    ("nan_same_places/wrt_b", [[3.0, -1.0], [-2.0, 0.5]], [[3.0, -1.5], [-1.0, 0.5]], ("b",), True),
    ("nan_other_places", [1.0, -1.0, 2.0, 3.0], [1.0, 2.0, -2.0, 3.0], ("a", "b"), False),
)


def nan_cases(row: Compare) -> list:
    """The select form where the condition meets NaN (tagged where the NaNs pair up)."""
    out = []
    for k, (name, a, b, wrt, tagged) in enumerate(NAN_FORMS):
        shape = np.shape(a)
        out.append(Scenario(
            name=f"compare/{row.name}/convention/{name}", op=row.name, operands={"a": tensor(a), "b": tensor(b)},
            wrt=wrt, params={"form": "select"}, cotangent=W.cotangent_tensor(shape, 381 + k, "float32"),
            family="compare", defect_tags=(row.nan_defect,) if tagged else (),
            description="negative entries (NaN) in the same places: equal only where NaN counts as equal"
            if tagged else "negative entries (NaN) in different places: unequal either way (a control)"))
    return out


# --- fuzz strategy ---------------------------------------------------------------------------------

def draw_operand(draw, domain, shape, dtype) -> tuple:
    """(Tensor, its shape): broadcasting to `shape` (never to a zero-size output: the
    note in binary.py), in a drawn layout."""
    own = shape if 0 in shape else D.broadcast_variant(draw, shape)
    kind = draw(D.choice(W.LAYOUTS))
    kind = kind if W.layout_possible(kind, own) else "contiguous"
    return W.operand(_values(domain, draw(D.irange(0, 2**16)), dtype), own, kind, dtype), own


def strategy_of(row: Compare):
    def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
        dtype = draw(D.choice(tuple(dtypes)))
        form = draw(D.choice(FORMS_OF_CALL))
        shape = W.draw_shape(draw)
        a, _ = draw_operand(draw, row.a, shape, dtype)
        operands = {"a": a}
        if not (row.unary and form == "own"):
            operands["b"], _ = draw_operand(draw, row.b, shape, dtype)
        out = np.shape(reference_of(row)({n: layout.logical(t) for n, t in operands.items()}, {"form": form}))
        wrt = draw(D.choice(tuple(D.nonempty_subsets(tuple(operands)))))
        cot, mode = W.draw_cotangent(draw, out, _cot_dtype(dtype, form))
        return W.finish(Scenario(name="", op=row.name, operands=operands, wrt=wrt, params={"form": form},
                                 cotangent=cot, family="compare",
                                 description=f"generated: {form}, {dtype}, output {out}, cotangent {mode}"))
    return fuzz_case


def call_expression_of(row: Compare):
    def call_expression(params, names) -> str:
        cond = row.condition.format(a=names["a"], b=names.get("b", ""))
        if params.get("form") == "own":
            return cond
        return f"mx.where({cond}, {names['a']}, -{names['b']})"
    return call_expression


def opinfo(row: Compare) -> OpInfo:
    return OpInfo(
        name=row.name, known_defects=tuple(KnownDefect(t, revealed_by="vmap")   # both only under vmap
                                           for t in (row.b_alone_defect, row.nan_defect) if t),
        summary=f"{row.condition.format(a='a', b='b')}: inside where(., a, -b) and on its own",
        operands=("a", "b"), differentiable=("a", "b"), optional_operands=("b",) if row.unary else (),
        reference=reference_of(row), reference_vjp=reference_vjp_of(row), exact=True, rule=row.rule,
        mlx_call=f"{REPRO}:{row.name}_call", call_expression=call_expression_of(row),
        scenarios=scenarios_of(row), strategy=strategy_of(row), primitives=row.primitives, dtypes=FLOATS,
        complex=True)


# --- bitwise: on the operands cast to int32, the result cast back -----------------------------------

BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
           "left_shift": np.left_shift, "right_shift": np.right_shift}
BITWISE_MX = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
              "left_shift": "left_shift", "right_shift": "right_shift"}
WORDS = Domain(-7.5, 7.5, ("integers",), margin=0.5)        # +-0.5 .. +-7.5: the cast truncates
SHIFTS = Domain(0.5, 3.5, ("integers",), margin=0.5)        # shift amounts 0..3


def _ints(x) -> np.ndarray:
    """The int32 cast: truncation; of complex64, of the real part (MLX 0.32.4's cast)."""
    return np.trunc(np.real(np.asarray(x)).astype(np.float64)).astype(np.int32)


def bitwise_reference(inp, params):
    """fn of the int32 casts, cast back to a's dtype (complex128 for a complex a)."""
    out = BITWISE[params["fn"]](_ints(inp["a"]), _ints(inp["b"]))
    return out.astype(np.complex128 if np.iscomplexobj(inp["a"]) else np.float64)


def bitwise_reference_vjp(inp, g, params):
    """Piecewise constant in both operands (the casts truncate): gradient 0."""
    return {"a": np.zeros(np.shape(inp["a"])), "b": np.zeros(np.shape(inp["b"]))}


def _shift(fn) -> bool:
    return fn.endswith("shift")


# A defect class found by the fuzzer here (see the Findings table): BitwiseBinary::vmap
# builds its output in the first operand's shape, so under vmap with a unbatched and b
# batched the output has a's shape (one row for the batch of two).
BITWISE_VMAP = "bitwise_vmap_out_shape"

# (name, fn, (a shape, layout), (b shape, layout), dtype, wrt)
BITWISE_FORMS = (
    ("and/rank0", "and", ((), "contiguous"), ((), "contiguous"), "float32", ("a", "b")),
    ("or/rank1", "or", ((5,), "contiguous"), ((5,), "reversed"), "float32", ("a", "b")),
    ("xor/strided_reversed", "xor", ((3, 4), "strided_reversed"), ((3, 4), "transposed"), "float32", ("a", "b")),
    ("left_shift/broadcast", "left_shift", ((3, 1, 4), "broadcast_singleton"), ((4,), "contiguous"), "float32",
     ("a", "b")),
    ("right_shift/float16", "right_shift", ((3, 4), "transposed"), ((3, 4), "strided"), "float16", ("a", "b")),
    ("and/bfloat16", "and", ((3, 4), "strided"), ((3, 4), "contiguous"), "bfloat16", ("a", "b")),
    ("or/empty", "or", ((0, 3), "contiguous"), ((0, 3), "contiguous"), "float32", ("a", "b")),
    ("xor/wrt_b", "xor", ((4,), "contiguous"), ((4,), "contiguous"), "float32", ("b",)),
    ("or/rank1/complex64", "or", ((5,), "contiguous"), ((5,), "reversed"), W.COMPLEX, ("a", "b")),
    ("left_shift/complex64", "left_shift", ((3, 4), "transposed"), ((4,), "contiguous"), W.COMPLEX, ("a", "b")),
)


def bitwise_scenarios() -> list:
    out = []
    for k, (name, fn, (sa, ka), (sb, kb), dtype, wrt) in enumerate(BITWISE_FORMS):
        a = W.operand(_values(WORDS, 401 + k, dtype), sa, ka, dtype)
        b = W.operand(_values(SHIFTS if _shift(fn) else WORDS, 431 + k, dtype), sb, kb, dtype)
        cot = W.cotangent_tensor(tuple(np.broadcast_shapes(tuple(sa), tuple(sb))), 461 + k, dtype)
        tags = (BITWISE_VMAP,) if wrt == ("b",) else ()
        out.append(Scenario(name=f"compare/bitwise/{name}", op="bitwise", operands={"a": a, "b": b},
                            wrt=wrt, params={"fn": fn}, cotangent=cot, family="compare", defect_tags=tags,
                            description=f"{fn} of the int32 casts: a {ka} {sa}, b {kb} {sb}, {dtype}"))
    return out


def bitwise_fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(tuple(dtypes)))
    fn = draw(D.choice(tuple(BITWISE)))
    shape = W.draw_shape(draw)
    a, sa = draw_operand(draw, WORDS, shape, dtype)
    b, sb = draw_operand(draw, SHIFTS if _shift(fn) else WORDS, shape, dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "b")))))
    cot, mode = W.draw_cotangent(draw, tuple(np.broadcast_shapes(sa, sb)), dtype)
    return W.finish(Scenario(name="", op="bitwise", operands={"a": a, "b": b}, wrt=wrt, params={"fn": fn},
                             cotangent=cot, family="compare",
                             description=f"generated: {fn}, {dtype}, a {sa}, b {sb}, cotangent {mode}"))


def _bitwise_expression(params, names) -> str:
    a, b = names["a"], names["b"]
    return f"mx.{BITWISE_MX[params['fn']]}({a}.astype(mx.int32), {b}.astype(mx.int32)).astype({a}.dtype)"


BITWISE_OP = OpInfo(
    name="bitwise", known_defects=(KnownDefect(BITWISE_VMAP, revealed_by="vmap"),),
    summary="bitwise and/or/xor/shifts of the int32 casts, cast back: BitwiseBinary in a graph",
    operands=("a", "b"), differentiable=("a", "b"), reference=bitwise_reference,
    reference_vjp=bitwise_reference_vjp, exact=True,
    rule="fn(int(a), int(b)) cast back to float is piecewise constant: gradient 0",
    mlx_call=f"{REPRO}:bitwise_call", call_expression=_bitwise_expression, scenarios=bitwise_scenarios,
    strategy=bitwise_fuzz_case, primitives=("BitwiseBinary", "AsType", "Broadcast"), dtypes=FLOATS, complex=True)


# --- where: Select with a fixed bool mask ----------------------------------------------------------

def where_reference(inp, params):
    return np.where(np.asarray(inp["mask"]) != 0, np.asarray(inp["a"]), np.asarray(inp["b"]))


def where_reference_vjp(inp, g, params):
    a, b, g = np.asarray(inp["a"]), np.asarray(inp["b"]), np.asarray(g)
    m = np.broadcast_to(np.asarray(inp["mask"]) != 0, g.shape)
    return {"a": W.unbroadcast(np.where(m, g, 0.0), a.shape), "b": W.unbroadcast(np.where(m, 0.0, g), b.shape)}


def _mask(shape, seed, fill=None):
    vals = np.full(shape, fill) if fill is not None else D.hashed_ints(shape, seed, 0, 2)
    return integer_tensor(vals, "bool")


# (name, (mask shape, constant mask value or None), (a shape, layout), (b shape, layout), dtype, wrt)
WHERE_FORMS = (
    ("rank0", ((), None), ((), "contiguous"), ((), "contiguous"), "float32", ("a", "b")),
    ("rank1", ((5,), None), ((5,), "reversed"), ((5,), "contiguous"), "float32", ("a", "b")),
    ("broadcast", ((3, 1), None), ((4,), "contiguous"), ((), "contiguous"), "float32", ("a", "b")),
    ("strided_reversed", ((3, 4), None), ((3, 4), "strided_reversed"), ((3, 4), "transposed"), "float32",
     ("a", "b")),
    ("singleton", ((1, 4), None), ((3, 1, 4), "broadcast_singleton"), ((3, 1, 4), "singleton"), "float32",
     ("a", "b")),
    ("empty", ((0, 3), None), ((0, 3), "contiguous"), ((0, 3), "contiguous"), "float32", ("a", "b")),
    ("all_true/wrt_b", ((3, 4), 1), ((3, 4), "contiguous"), ((3, 4), "strided"), "float32", ("b",)),
    ("float16", ((3, 4), None), ((3, 4), "transposed"), ((3, 4), "contiguous"), "float16", ("a", "b")),
    ("bfloat16", ((4,), None), ((3, 4), "strided"), ((3, 4), "contiguous"), "bfloat16", ("a", "b")),
    ("complex64", ((3, 4), None), ((3, 4), "reversed"), ((3, 4), "transposed"), W.COMPLEX, ("a", "b")),
)
PLAIN = Domain(-3.0, 3.0)


def _where_values(seed, dtype):
    if dtype == W.COMPLEX:
        return lambda shape: W.complex_values(shape, seed)
    return _values(PLAIN, seed)


def where_scenarios() -> list:
    out = []
    for k, (name, (sm, fill), (sa, ka), (sb, kb), dtype, wrt) in enumerate(WHERE_FORMS):
        m = _mask(sm, 501 + k, fill)
        a = W.operand(_where_values(531 + k, dtype), sa, ka, dtype)
        b = W.operand(_where_values(561 + k, dtype), sb, kb, dtype)
        shape = tuple(np.broadcast_shapes(tuple(m.shape), tuple(sa), tuple(sb)))
        out.append(Scenario(name=f"compare/where/{name}", op="where", operands={"mask": m, "a": a, "b": b},
                            wrt=wrt, cotangent=W.cotangent_tensor(shape, 591 + k, dtype), family="compare",
                            description=f"mask {m.shape}, a {ka} {sa}, b {kb} {sb}, {dtype}"))
    return out


def where_fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(tuple(dtypes)))
    shape = W.draw_shape(draw)
    a, sa = _where_operand(draw, shape, dtype)
    b, sb = _where_operand(draw, shape, dtype)
    mshape = shape if 0 in shape else D.broadcast_variant(draw, shape)
    m = _mask(mshape, draw(D.irange(1, 2**16)))
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "b")))))
    cot, mode = W.draw_cotangent(draw, tuple(np.broadcast_shapes(mshape, sa, sb)), dtype)
    return W.finish(Scenario(name="", op="where", operands={"mask": m, "a": a, "b": b}, wrt=wrt, cotangent=cot,
                             family="compare",
                             description=f"generated: mask {mshape}, a {sa}, b {sb}, {dtype}, cotangent {mode}"))


def _where_operand(draw, shape, dtype) -> tuple:
    own = shape if 0 in shape else D.broadcast_variant(draw, shape)
    kind = draw(D.choice(W.LAYOUTS))
    kind = kind if W.layout_possible(kind, own) else "contiguous"
    return W.operand(_where_values(draw(D.irange(0, 2**16)), dtype), own, kind, dtype), own


WHERE = OpInfo(
    name="where", summary="mx.where(mask, a, b): the Select primitive with a fixed mask, broadcasting",
    operands=("mask", "a", "b"), differentiable=("a", "b"), integer_operands=("mask",),
    reference=where_reference, reference_vjp=where_reference_vjp, exact=True, multilinear=True,
    rule="where(m, a, b): g to a where m holds, to b elsewhere, summed over broadcast axes",
    mlx_call=f"{REPRO}:where_call",
    call_expression=lambda params, names: f"mx.where(mx.array({names['mask']}).astype(mx.bool_), "
                                          f"{names['a']}, {names['b']})",
    scenarios=where_scenarios, strategy=where_fuzz_case, primitives=("Select", "Broadcast"), dtypes=FLOATS,
    complex=True)


OPS = tuple(opinfo(row) for row in COMPARE) + (BITWISE_OP, WHERE)
