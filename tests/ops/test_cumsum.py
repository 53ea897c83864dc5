"""cumsum: the reference against hand-computed values under every flag
combination, plausible wrong flag handling in the reverse rule (Scan::vjp's
shift logic) each rejected by the catalog, and the catalog and a rendered
reproducer on MLX 0.32.4."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W


def _flags(rev, inc, axis=0):
    return {"axis": axis, "reverse": rev, "inclusive": inc}


def test_reference_by_hand():
    from mlx_vjpcheck.ops import cumsum
    x, g = {"a": np.array([1.0, 2.0, 3.0])}, np.array([1.0, 10.0, 100.0])
    cases = {   # (reverse, inclusive): (forward, gradient = the adjoint scan of g)
        (False, True): ([1, 3, 6], [111, 110, 100]),
        (False, False): ([0, 1, 3], [110, 100, 0]),
        (True, True): ([6, 5, 3], [1, 11, 111]),
        (True, False): ([5, 3, 0], [0, 1, 11]),
    }
    for (rev, inc), (y, dx) in cases.items():
        p = _flags(rev, inc)
        assert cumsum.reference(x, p).tolist() == y, (rev, inc)
        assert cumsum.reference_vjp(x, g, p)["a"].tolist() == dx, (rev, inc)
    m = {"a": np.array([[1.0, 2.0], [3.0, 4.0]])}
    assert cumsum.reference(m, _flags(False, True, axis=1)).tolist() == [[1, 3], [3, 7]]
    assert cumsum.reference_vjp(m, np.ones((2, 2)), _flags(True, False, axis=0))["a"].tolist() == [[0, 0], [1, 1]]


# --- wrong reverse rules: plausible slips in the flag logic ----------------------------------

MUTANTS = {
    "reverse_ignored": lambda ctx: ctx.reference(reverse=not ctx.params["reverse"]),
    "exclusive_unshifted": lambda ctx: ctx.reference(inclusive=True),
    "forward_scan_of_cotangent": lambda ctx: {"a": ctx.s.info.reference({"a": ctx.cot}, ctx.params)},
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_is_rejected(mutant):
    assert W.caught("cumsum", MUTANTS[mutant], first_only=True), mutant


def test_the_true_rule_planted_the_same_way_is_accepted():
    assert W.honest_control("cumsum")


# --- MLX 0.32.4 ---------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_catalog_passes_on_pinned_mlx():
    st = W.honest("cumsum")
    assert st and set(st.values()) == {"pass"}, {n: v for n, v in st.items() if v != "pass"}


@needs_pinned_mlx()
def test_reproducer_says_absent(tmp_path):
    from mlx_vjpcheck.cases import reproducer
    s = next(s for s in W.scenarios("cumsum") if s.name == "cumsum/strided/reverse/exclusive")
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "VERDICT: defect absent" in proc.stdout, proc.stdout + proc.stderr
