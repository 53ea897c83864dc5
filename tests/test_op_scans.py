"""cumprod, cummax, cummin: references against hand-computed values (against
float64 differences: test_op_contracts.py), the fuzz strategies' promises, and semantic mutants
(plausible wrong VJPs for Scan's prod/max/min rules) each rejected by the
catalog."""
from __future__ import annotations

import numpy as np
import pytest

import op_mutants as M
from conftest import needs_pinned_mlx


@pytest.fixture
def ops(monkeypatch):
    M.use_ops(monkeypatch)
    from mlx_vjpcheck import ops as registry
    return registry


def _flags(rev, inc, axis=0, **extra):
    return dict({"axis": axis, "reverse": rev, "inclusive": inc}, **extra)


# --- references: hand-computed --------------------------------------------------------------

def test_cumprod_reference_by_hand():
    from mlx_vjpcheck.ops import cumprod
    x, g = {"a": np.array([2.0, 0.0, 3.0])}, np.ones(3)
    cases = {   # (reverse, inclusive): (forward, gradient)
        (False, True): ([2, 0, 0], [1, 8, 0]),     # d/dx1 of x0 x1 + x0 x1 x2 = x0 + x0 x2
        (False, False): ([1, 2, 0], [1, 2, 0]),    # y = (1, x0, x0 x1)
        (True, True): ([0, 0, 3], [0, 9, 1]),      # y = (x0 x1 x2, x1 x2, x2)
        (True, False): ([0, 3, 1], [0, 3, 1]),     # y = (x1 x2, x2, 1): d/dx2 = x1 + 1
    }
    for (rev, inc), (y, dx) in cases.items():
        p = _flags(rev, inc)
        assert cumprod.reference(x, None, None, p).tolist() == y, (rev, inc)
        assert cumprod.reference_vjp(x, g, None, None, p)["a"].tolist() == dx, (rev, inc)


def test_cummax_and_cummin_references_by_hand():
    from mlx_vjpcheck.ops import cummax, cummin
    x, g = {"a": np.array([1.0, 5.0, 2.0, 7.0])}, np.array([1.0, 2.0, 3.0, 4.0])
    fwd, vjp = cummax.OPS[0].reference, cummax.OPS[0].reference_vjp
    assert fwd(x, None, None, _flags(False, True)).tolist() == [1, 5, 5, 7]
    assert vjp(x, g, None, None, _flags(False, True))["a"].tolist() == [1, 5, 0, 4]
    assert fwd(x, None, None, _flags(True, True)).tolist() == [7, 7, 7, 7]
    assert vjp(x, g, None, None, _flags(True, True))["a"].tolist() == [0, 0, 0, 10]
    assert fwd(x, None, None, _flags(False, False)).tolist() == [-np.inf, 1, 5, 5]
    trimmed = _flags(False, False, trim=True)   # the identity position dropped
    assert fwd(x, None, None, trimmed).tolist() == [1, 5, 5]
    assert vjp(x, g[:3], None, None, trimmed)["a"].tolist() == [1, 5, 0, 0]
    mn = cummin.OPS[0]
    assert mn.reference(x, None, None, _flags(True, False)).tolist() == [2, 2, 7, np.inf]
    assert mn.reference_vjp(x, g, None, None, _flags(True, False))["a"].tolist() == [0, 0, 3, 3]


def test_cummax_reference_refuses_an_active_tie():
    from mlx_vjpcheck.core.numeric import ReferenceUndecided
    from mlx_vjpcheck.ops import cummax
    vjp = cummax.OPS[0].reference_vjp
    with pytest.raises(ReferenceUndecided):
        vjp({"a": np.array([3.0, 1.0, 3.0])}, np.ones(3), None, None, _flags(False, True))
    # a tie below the running maximum is harmless
    assert vjp({"a": np.array([1.0, 1.0, 3.0])}, np.ones(3), None, None,
               _flags(True, True))["a"].tolist() == [0, 0, 3]


# The hand-written VJPs against float64 differences of the forward, on every catalog
# scenario: test_op_contracts.py (test_hand_written_vjp_agrees_with_differences).


# --- fuzz strategies keep their promises ------------------------------------------------------

def _draws(op, dtypes, n=60):
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.fuzz import targets
    out = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy(op, dtypes))
    def collect(s):
        out.append(s)
    collect()
    return out


def test_cumprod_strategy_stays_exact_in_each_dtype(ops):
    """Every product and every partial sum of g * y stays an integer the dtype holds."""
    from mlx_vjpcheck.cases import expected
    limit = {"float32": 2.0 ** 24, "float16": 2048.0, "bfloat16": 256.0}
    for s in _draws("cumprod", ("float32", "float16", "bfloat16")):
        exp = expected.expected(s)
        g = expected.cotangent(s, exp["forward"])
        bound = np.abs(g * exp["forward"]).sum() + np.abs(exp["forward"]).max(initial=0)
        assert bound <= limit[s.operands["a"].dtype], s.name


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_extreme_strategies_have_no_ties_and_finite_outputs(ops, op):
    from mlx_vjpcheck.cases import expected
    for s in _draws(op, ("float32", "bfloat16")):
        exp = expected.expected(s)   # raises ReferenceUndecided on a tie
        assert np.all(np.isfinite(exp["forward"])), s.name


# --- semantic mutants: plausible wrong rules, each rejected by the catalog --------------------

def _scan(fn_name):
    def core(mx, a, p):
        return getattr(mx, fn_name)(a, axis=p["axis"], reverse=p["reverse"], inclusive=p["inclusive"])
    return core


def _cumprod_ref(x, g, p):
    from mlx_vjpcheck.ops import cumprod
    return cumprod.reference_vjp({"a": x}, g, None, None, p)["a"]


def _every_zero_patched(x, g, y, p):
    """MLX's patch applied to every zero instead of the first: the gradient at each
    zero recomputed with all zeros set to one."""
    patched = _cumprod_ref(np.where(x == 0, 1.0, x), g, p)
    return np.where(x == 0, patched, _cumprod_ref(x, g, p))


def _divided(x, g, y, p):
    """The textbook rule without the zero patch: (adjoint scan of g * y) / x."""
    from mlx_vjpcheck.ops import cumsum
    with np.errstate(divide="ignore", invalid="ignore"):
        return cumsum.reference_vjp({"a": x}, g * y, None, None, p)["a"] / x


CUMPROD_MUTANTS = {
    "reverse_ignored": (lambda x, g, y, p: _cumprod_ref(x, g, dict(p, reverse=not p["reverse"])), "no_zero"),
    "inclusive_ignored": (lambda x, g, y, p: _cumprod_ref(x, g, dict(p, inclusive=not p["inclusive"])), "no_zero"),
    "zeros_get_zero": (lambda x, g, y, p: np.where(x == 0, 0.0, _cumprod_ref(x, g, p)), "one_zero"),
    "every_zero_patched": (_every_zero_patched, "two_zeros"),
    "divided_by_input": (_divided, "zero_first"),
}


@pytest.mark.parametrize("mutant", sorted(CUMPROD_MUTANTS))
def test_cumprod_mutant_is_rejected(ops, monkeypatch, mutant):
    vjp, where = CUMPROD_MUTANTS[mutant]
    names = M.caught(monkeypatch, "cumprod", M.numpy_vjp(_scan("cumprod"), vjp))
    assert any(where in n for n in names), (mutant, names)


def _extreme_ref(kind, x, g, p):
    from mlx_vjpcheck.ops import cummax
    return cummax.reference_vjp_of(kind)({"a": x}, g, None, None, dict(p, trim=False))["a"]


def _assigned(kind):
    """Route each output's cotangent to its owner, keeping only the last write."""
    from mlx_vjpcheck.ops import cummax, cumprod, cumsum

    def vjp(x, g, y, p):
        axis, rev, inc = cumprod.scan_flags(p)
        xl, gl = cumprod.to_lanes(x, axis), cumprod.to_lanes(g, axis)
        dx = np.zeros(xl.shape)
        n = xl.shape[-1]
        for lane in np.ndindex(xl.shape[:-1]):
            for i in range(n):
                w = cumsum.summed(i, n, rev, inc)
                if w:
                    dx[lane + (cummax.owner(xl[lane], w, kind),)] = gl[lane + (i,)]
        return cumprod.lanes_to_input(dx, x.shape, axis)
    return vjp


def _extreme_mutants(kind):
    return {
        "reverse_ignored": lambda x, g, y, p: _extreme_ref(kind, x, g, dict(p, reverse=not p["reverse"])),
        "exclusive_unshifted": lambda x, g, y, p: _extreme_ref(kind, x, g, dict(p, inclusive=True)),
        "assigned_not_added": _assigned(kind),
        "passed_through": lambda x, g, y, p: g,
    }


def _trim(mx, y, p):
    """The scenario's trim (an ordinary slice), after the mutated scan."""
    from mlx_vjpcheck.ops import cummax
    return cummax.call(mx, lambda t, **kw: t, y, p)


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("mutant", ["reverse_ignored", "exclusive_unshifted", "assigned_not_added",
                                    "passed_through"])
def test_extreme_scan_mutant_is_rejected(ops, monkeypatch, kind, mutant):
    call = M.numpy_vjp(_scan(f"cum{kind}"), _extreme_mutants(kind)[mutant], _trim)
    names = M.caught(monkeypatch, f"cum{kind}", call)
    assert names, mutant
    if mutant == "exclusive_unshifted":   # the trimmed exclusive scans alone catch it
        assert any("exclusive" in n and "nonfinite" not in n for n in names), names


def test_an_honest_numpy_vjp_is_accepted(ops, monkeypatch):
    """Control for the mutants: the true rule through the same wrapper passes."""
    honest = M.statuses("cumprod")
    M.install(monkeypatch, "cumprod", M.numpy_vjp(_scan("cumprod"), lambda x, g, y, p: _cumprod_ref(x, g, p)))
    assert M.statuses("cumprod") == honest


# --- MLX 0.32.4: the catalog is clean, non-finite scenarios included --------------------------

@needs_pinned_mlx()
@pytest.mark.parametrize("op", ["cumprod", "cummax", "cummin"])
def test_catalog_passes_on_pinned_mlx(ops, op):
    st = M.statuses(op)
    assert st and set(st.values()) == {"pass"}, {n: v for n, v in st.items() if v != "pass"}


@needs_pinned_mlx()
@pytest.mark.parametrize("kind", ["max", "min"])
def test_untrimmed_exclusive_scan_holds_the_exact_identity(ops, kind):
    """The non-finite scenarios' claim checked directly (independent of the
    comparison rule): the identity position is exactly -inf / +inf, the gradient finite."""
    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.running import execute
    for s in ops.get(f"cum{kind}").catalog_scenarios():
        if "nonfinite/" not in s.name:
            continue
        exp = expected.expected(s)
        obs = execute.observe(s, expected.cotangent(s, exp["forward"]))
        assert np.array_equal(obs["forward"], exp["forward"]), s.name
        assert np.all(np.isfinite(obs["grad:a"])) and np.allclose(obs["grad:a"], exp["grad:a"]), s.name
