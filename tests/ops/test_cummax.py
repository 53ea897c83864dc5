"""cummax and cummin (both declared in ops/cummax.py): references against
hand-computed values (against float64 differences: test_op_contracts.py), the
tie refusal, the fuzz strategies' promises, semantic mutants (plausible wrong
VJPs for Scan's max/min rules) each rejected by the catalog, and the exact
identity of an untrimmed exclusive scan on MLX 0.32.4."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.ops._support import lanes as L


def _flags(rev, inc, axis=0, **extra):
    return dict({"axis": axis, "reverse": rev, "inclusive": inc}, **extra)


# --- references: hand-computed --------------------------------------------------------------

def test_both_records_are_declared_in_listing_order():
    from mlx_vjpcheck.ops import cummax
    assert [info.name for info in cummax.OPS] == ["cummax", "cummin"]


def test_cummax_and_cummin_references_by_hand():
    from mlx_vjpcheck.ops import cummax
    mx_info, mn = cummax.OPS
    x, g = {"a": np.array([1.0, 5.0, 2.0, 7.0])}, np.array([1.0, 2.0, 3.0, 4.0])
    fwd, vjp = mx_info.reference, mx_info.reference_vjp
    assert fwd(x, _flags(False, True)).tolist() == [1, 5, 5, 7]
    assert vjp(x, g, _flags(False, True))["a"].tolist() == [1, 5, 0, 4]
    assert fwd(x, _flags(True, True)).tolist() == [7, 7, 7, 7]
    assert vjp(x, g, _flags(True, True))["a"].tolist() == [0, 0, 0, 10]
    assert fwd(x, _flags(False, False)).tolist() == [-np.inf, 1, 5, 5]
    trimmed = _flags(False, False, trim=True)   # the identity position dropped
    assert fwd(x, trimmed).tolist() == [1, 5, 5]
    assert vjp(x, g[:3], trimmed)["a"].tolist() == [1, 5, 0, 0]
    assert mn.reference(x, _flags(True, False)).tolist() == [2, 2, 7, np.inf]
    assert mn.reference_vjp(x, g, _flags(True, False))["a"].tolist() == [0, 0, 3, 3]


def test_cummax_reference_refuses_an_active_tie():
    from mlx_vjpcheck.core.numeric import ReferenceUndecided
    from mlx_vjpcheck.ops import cummax
    vjp = cummax.OPS[0].reference_vjp
    with pytest.raises(ReferenceUndecided):
        vjp({"a": np.array([3.0, 1.0, 3.0])}, np.ones(3), _flags(False, True))
    # a tie below the running maximum is harmless
    assert vjp({"a": np.array([1.0, 1.0, 3.0])}, np.ones(3), _flags(True, True))["a"].tolist() == [0, 0, 3]


# --- the fuzz strategies keep their promises ------------------------------------------------------

@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_strategies_have_no_ties_and_finite_outputs(op):
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy(op, ("float32", "bfloat16")))
    def check(s):
        exp = expected.expected(s)   # raises ReferenceUndecided on a tie
        assert np.all(np.isfinite(exp["forward"])), s.name
    check()


# --- semantic mutants: plausible wrong rules, each rejected by the catalog --------------------
# A mutant replaces the VJP of the whole call, the trim included; it rebuilds what the
# scan itself receives (the trimmed call's cotangent, 0 at the identity position) and
# applies a wrong rule to the untrimmed scan.

def _scan_cot(ctx):
    """The cotangent of the untrimmed scan."""
    p = ctx.params
    if not (p.get("trim") and not p["inclusive"]):
        return ctx.cot
    lanes = L.to_lanes(ctx.cot, p["axis"])
    pad = [(0, 0)] * (lanes.ndim - 1) + [(0, 1) if p["reverse"] else (1, 0)]
    return L.from_lanes(np.pad(lanes, pad), p["axis"])


def _scan_rule(ctx, **changed):
    """The true rule of the untrimmed scan, under changed flags."""
    params = dict(ctx.params, trim=False, **changed)
    return ctx.s.info.reference_vjp(ctx.operands, _scan_cot(ctx), params)


def _assigned(kind):
    """Route each output's cotangent to its owner, keeping only the last write."""
    from mlx_vjpcheck.ops import cummax

    def backward(ctx):
        x = ctx.operands["a"]
        axis, rev, inc = L.scan_flags(ctx.params)
        xl, gl = L.to_lanes(x, axis), L.to_lanes(_scan_cot(ctx), axis)
        dx = np.zeros(xl.shape)
        n = xl.shape[-1]
        for lane in np.ndindex(xl.shape[:-1]):
            for i in range(n):
                w = L.summed(i, n, rev, inc)
                if w:
                    dx[lane + (cummax.owner(xl[lane], w, kind),)] = gl[lane + (i,)]
        return {"a": L.lanes_to_input(dx, x.shape, axis)}
    return backward


def _mutants(kind):
    return {
        "reverse_ignored": lambda ctx: _scan_rule(ctx, reverse=not ctx.params["reverse"]),
        "exclusive_unshifted": lambda ctx: _scan_rule(ctx, inclusive=True),
        "assigned_not_added": _assigned(kind),
        "passed_through": lambda ctx: {"a": _scan_cot(ctx)},
    }


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("mutant", ["reverse_ignored", "exclusive_unshifted", "assigned_not_added",
                                    "passed_through"])
def test_extreme_scan_mutant_is_rejected(kind, mutant):
    names = W.caught(f"cum{kind}", _mutants(kind)[mutant])
    assert names, mutant
    if mutant == "exclusive_unshifted":   # the trimmed exclusive scans alone catch it
        assert any("exclusive" in n and "nonfinite" not in n for n in names), names


@pytest.mark.parametrize("kind", ["max", "min"])
def test_the_true_rule_planted_the_same_way_is_accepted(kind):
    """Control for the mutants: the true rule of the untrimmed scan, through the same
    rebuilt cotangent and wrapper, changes no verdict."""
    op = f"cum{kind}"
    assert W.statuses(op, lambda ctx: _scan_rule(ctx)) == W.honest(op)


# --- MLX 0.32.4: the catalog is clean, non-finite scenarios included --------------------------

@needs_pinned_mlx()
@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_catalog_passes_on_pinned_mlx(op):
    st = W.honest(op)
    assert st and set(st.values()) == {"pass"}, {n: v for n, v in st.items() if v != "pass"}


@needs_pinned_mlx()
@pytest.mark.parametrize("kind", ["max", "min"])
def test_untrimmed_exclusive_scan_holds_the_exact_identity(kind):
    """The non-finite scenarios' claim checked directly (independent of the
    comparison rule): the identity position is exactly -inf / +inf, the gradient finite."""
    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.running import devices, execute
    devices.select("cpu")
    nonfinite = [s for s in W.scenarios(f"cum{kind}") if "nonfinite/" in s.name]
    assert nonfinite
    for s in nonfinite:
        exp = expected.expected(s)
        forward, grads = execute.Call(s).vjp(expected.cotangent(s, exp["forward"]))
        assert np.array_equal(forward, exp["forward"]), s.name
        assert np.all(np.isfinite(grads["a"])) and np.allclose(grads["a"], exp["grad:a"]), s.name


@needs_pinned_mlx()
@pytest.mark.parametrize("name", ["cummax/strided/reverse/exclusive", "cummin/flattened/axis_none/exclusive",
                                  "cummin/nonfinite/matrix/axis0/reverse/exclusive"])
def test_reproducer_says_absent(tmp_path, name):
    """Each op's own call in the rendered script (cummin's is a second function of the file)."""
    from mlx_vjpcheck.cases import reproducer
    s = next(s for s in W.scenarios(name.split("/")[0]) if s.name == name)
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "VERDICT: defect absent" in proc.stdout, proc.stdout + proc.stderr
