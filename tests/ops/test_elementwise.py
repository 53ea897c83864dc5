"""elementwise (the unary table, astype, identity): the table's rows are consistent
(domains inside where the functions are smooth, kinks at the margin, dtypes, the
primitives MLX defines with a VJP), every reference VJP agrees with float64
differences of its forward (complex ones too), the catalog on MLX 0.32.4 (every
untagged scenario passes, the tagged complex-sign defect is present), planted wrong
VJPs are caught (plain, only at a 0-d input, only for a strided view, only for a
zero-size input, only in one dtype, a zero rule shifted), and the strategies draw
what they promise."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from helpers import elementwise as D
from helpers import wrong_vjp as W
from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import coverage, expected
from mlx_vjpcheck.core import numeric
from mlx_vjpcheck.ops import elementwise as E
from mlx_vjpcheck.ops._support import elementwise as S

NAMES = [info.name for info in E.OPS]
STEP = 3 * numeric.H0   # the largest step the transform oracles' differences take


# --- the table -------------------------------------------------------------------------------------

def test_one_record_per_row_in_table_order():
    assert NAMES == [row.name for row in E.UNARY] + ["astype", "identity"]
    assert len(set(NAMES)) == len(NAMES)


@pytest.mark.parametrize("row", E.UNARY, ids=lambda r: r.name)
def test_row_is_smooth_on_its_domain_and_a_step_around_it(row):
    """Forward and VJP are finite on every grid value, STEP either side, and (complex rows)
    on the complex grid: the domains keep the edges away."""
    grid = row.domain.grid()
    ref, vjp = E.reference_of(row), E.reference_vjp_of(row)
    for x in (grid, grid - STEP, grid + STEP):
        assert np.all(np.isfinite(ref({"a": x}, {}))), row.name
        assert np.all(np.isfinite(vjp({"a": x}, np.ones_like(x), {})["a"])), row.name
    if row.complex:
        z = S.complex_values((64,), 7)
        assert np.all(np.isfinite(ref({"a": z}, {}))) and np.all(np.isfinite(vjp({"a": z}, np.ones(64) + 1j, {})["a"]))


def test_kinks_stay_at_the_margin_and_conventions_sit_on_them():
    for row in E.UNARY:
        for kind in row.domain.kinks:
            assert np.min(S.kink_distance(row.domain.grid(), kind)) >= S.MARGIN > STEP, row.name
            assert all(np.any(S.kink_distance(np.array(vals), kind) == 0) for _, vals, _ in row.conventions), row.name
        assert bool(row.conventions) == bool(row.domain.kinks), row.name


def test_records_match_their_rows_and_name_primitives_mlx_defines_with_a_vjp():
    known = set(coverage.shipped().names)
    for row in E.UNARY:
        info = ops.get(row.name)
        assert (info.primitives, info.dtypes, info.complex) == (row.primitives, row.dtypes, row.complex)
    for name in NAMES:
        assert set(ops.get(name).primitives) <= known, name


def test_a_bad_row_is_refused():
    with pytest.raises(ValueError, match="exactly one"):
        E.Unary("x", "x", ("X",), np.sin, "r")
    with pytest.raises(ValueError, match="dtypes"):
        E.Unary("x", "x", ("X",), np.sin, "r", derivative=np.cos, dtypes=("int32",))
    with pytest.raises(ValueError, match="margin"):
        S.Domain(0.0, 1.0, ("zero",), margin=0.1)


# --- references ------------------------------------------------------------------------------------

def test_references_by_hand():
    abs_vjp = E.reference_vjp_of(E.UNARY[0])
    assert abs_vjp({"a": np.array([-2.0, 0.0, 3.0])}, np.array([1.0, 5.0, 2.0]), {})["a"].tolist() == [-1, 0, 2]
    z = np.array([3 + 4j])
    assert np.allclose(abs_vjp({"a": z}, np.array([2.0]), {})["a"], [2 * (3 + 4j) / 5])   # real g, z/|z| g
    assert np.allclose(E.erfinv(E.erf(np.array([-0.5, 0.25, 0.7]))), [-0.5, 0.25, 0.7], rtol=0, atol=1e-15)
    sqrt_vjp = E.reference_vjp_of(next(r for r in E.UNARY if r.name == "sqrt"))
    assert np.allclose(sqrt_vjp({"a": np.array([4.0])}, np.array([1.0]), {})["a"], [0.25])
    cast = E.astype_reference({"a": np.array([1.0 + 2.0 ** -12])}, {"to": "bfloat16"})
    assert cast.tolist() == [1.0]   # rounded as MLX rounds


@pytest.mark.parametrize("op", NAMES)
def test_reference_vjp_agrees_with_float64_differences(op):
    compared, wrong = D.against_differences(op)
    assert wrong == [] and compared >= 6, (compared, wrong)


def test_a_wrong_reference_disagrees_with_differences():
    """Negative control: arcsin's derivative without its square root is caught."""
    row = next(r for r in E.UNARY if r.name == "arcsin")
    wrong = E.reference_vjp_of(E.Unary("arcsin", "arcsin", row.primitives, np.arcsin, "r",
                                       derivative=lambda z: 1 / (1 - z * z), complex=True))
    compared, bad = D.against_differences("arcsin", dataclasses.replace(ops.get("arcsin"), reference_vjp=wrong))
    assert compared >= 6 and len(bad) >= compared - 2, bad


def test_complex_sign_reference_is_the_derivative_of_z_over_abs_z():
    """A second derivation of the finding's reference: d/dt of Re(conj(g) sign(z + t d))
    by hand-rolled central differences, for d = 1 and d = i."""
    row = next(r for r in E.UNARY if r.name == "sign")
    z, g, h = np.array([0.3 + 0.4j, -1.0 + 2.0j]), np.array([1.0 - 2.0j, 0.5 + 0.5j]), 1e-6
    grad = E.reference_vjp_of(row)({"a": z}, g, {})["a"]
    for d, part in ((1.0, np.real), (1j, np.imag)):
        fd = [(np.real(np.conj(g[i]) * row.forward(z[i] + h * d)) - np.real(np.conj(g[i]) * row.forward(z[i] - h * d)))
              / (2 * h) for i in range(2)]
        assert np.allclose(part(grad), fd, atol=1e-8)
    assert np.all(np.abs(grad) > 0.1)   # far from MLX's zero


# --- MLX 0.32.4 ------------------------------------------------------------------------------------

@needs_pinned_mlx()
@pytest.mark.parametrize("op", NAMES)
def test_catalog_on_pinned_mlx(op):
    failing, tagged = B.pinned_verdicts(op)
    assert failing == tagged, (failing, tagged)


@needs_pinned_mlx()
def test_complex_sign_defect_is_what_mlx_returns():
    """MLX 0.32.4: sign(z) = z / |z| for complex z, yet its VJP is zero (Sign::vjp = jvp = 0)."""
    import mlx.core as mx
    z = mx.array(np.array([0.3 + 0.4j, -1.0 + 2.0j], dtype=np.complex64))
    assert np.allclose(np.array(mx.sign(z)), [0.6 + 0.8j, (-1 + 2j) / np.sqrt(5)], atol=1e-6)
    _, (grad,) = mx.vjp(mx.sign, [z], [mx.array(np.array([1 - 2j, 0.5 + 0.5j], dtype=np.complex64))])
    assert np.all(np.array(grad) == 0)
    assert {s.name for s in W.scenarios("sign") if s.defect_tags} == {"unary/sign/complex64/reversed"}


# --- planted wrong VJPs (helpers/wrong_vjp.py through helpers/breadth.py) ---------------------------

MUTANTS = {   # op -> (mutant, what it gets wrong)
    "sin": (B.scaled_where(lambda s, n: True), "everywhere"),
    "exp": (B.scaled_where(B.rank0), "only at a 0-d input"),
    "arccos": (B.scaled_where(B.strided), "only for a strided view"),
    "log1p": (B.wrong_shape_where(B.zero_size), "only for a zero-size input (a wrong shape)"),
    "tanh": (B.scaled_where(B.in_dtype("float16")), "only in float16"),
    "sqrt": (B.scaled_where(B.in_dtype("bfloat16")), "only in bfloat16"),
    "floor": (lambda ctx: {n: g + 1 for n, g in ctx.honest().items()}, "a zero rule made nonzero"),
    "abs": (lambda ctx: {n: np.abs(g) for n, g in ctx.honest().items()}, "the sign dropped"),
    "astype": (B.scaled_where(B.rank0, -1.0), "only at a 0-d input, negated"),
    "identity": (B.scaled_where(lambda s, n: s.operands[n].views != ()), "only through a view"),
}


@pytest.mark.parametrize("op", sorted(MUTANTS))
def test_planted_wrong_vjp_is_caught(op):
    mutant, what = MUTANTS[op]
    assert B.first_order_caught(op, mutant, first_only=True), f"{op}: a VJP wrong {what} passed"


@pytest.mark.parametrize("op", ["sin", "abs", "floor"])
def test_the_true_rule_planted_the_same_way_is_accepted(op):
    assert B.first_order_control(op) == []


# --- strategies ------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["arccosh", "abs", "real", "astype", "round"])
def test_strategy_draws_decided_cases_in_every_dtype_it_is_given(op):
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.fuzz import targets
    info, seen = ops.get(op), set()
    dtypes = ("float32", "float16", "bfloat16") + (("complex64",) if info.complex else ())

    @settings(max_examples=60, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(targets.strategy(op, dtypes))
    def check(s):
        assert not info.call_problems(s)
        exp = expected.expected(s)   # decided: the domain keeps every value where the rule is smooth
        assert all(np.all(np.isfinite(v)) for v in exp.values())
        seen.add(s.dtype)
        seen.update(v["op"] for v in s.operands["a"].views)
    check()
    assert set(dtypes) <= seen and len(seen & {"slice", "transpose", "broadcast_to", "expand_dims"}) >= 3, seen


# --- astype from complex64 ---------------------------------------------------------------------------

def test_astype_from_complex_keeps_the_real_part():
    z = np.array([1.25 + 2j, -1.5 - 0.75j])
    assert E.astype_reference({"a": z}, {"to": "float32"}).tolist() == [1.25, -1.5]
    d = E.astype_reference_vjp({"a": z}, np.array([3.0, -1.0]), {"to": "float32"})["a"]
    assert np.iscomplexobj(d) and d.tolist() == [3, -1]


def _imaginary_leaked(ctx):
    """The real cotangent sent to the imaginary part too (g + i g) when the input is complex:
    as if Im x fed the real output; the true rule on real input."""
    g = np.asarray(ctx.cot)
    x = ctx.operands["a"]
    return {"a": (g + 1j * g if np.iscomplexobj(x) else np.real(g)).reshape(x.shape)}


@needs_pinned_mlx()
def test_astype_from_complex_in_mlx_and_a_leaked_imaginary_part_is_rejected_by_complex_rows_only():
    import mlx.core as mx
    z = mx.array(np.array([1.25 + 2j, -1.5 - 0.75j], dtype=np.complex64))
    (y,), (d,) = mx.vjp(lambda a: a.astype(mx.float32), [z], [mx.array([3.0, -1.0])])
    assert np.array(y).tolist() == [1.25, -1.5] and d.dtype == mx.complex64 and np.array(d).tolist() == [3, -1]
    from helpers import wrong_vjp as Wr
    rejected = [s.name for s in Wr.scenarios("astype") if Wr.honest("astype")[s.name] == "pass"
                and Wr._judge(s, _imaginary_leaked) != "pass"]
    assert rejected and all(n.endswith("/complex64/transposed") for n in rejected), rejected
