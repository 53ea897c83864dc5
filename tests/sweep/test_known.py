"""The sweep's registered classes: every declaration has its reproducer (probes/sweep/, or
the catalog register's in probes/findings/), each reproducer shows its defect on the
pinned MLX, every reproducer file is declared, and matching explains only what it says."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT, needs_pinned_mlx
from mlx_vjpcheck.sweep import known, run

SWEEP_PROBES = ROOT / "probes" / "sweep"
SWEEP_IDS = sorted({k.id for k in known.KNOWN if not k.catalog and not k.limitation})


def test_every_declaration_has_its_reproducer_and_every_reproducer_is_declared():
    files = {p.stem for p in SWEEP_PROBES.glob("*.py")}
    assert files == set(SWEEP_IDS)
    register = {e["id"] for e in json.loads((ROOT / "harness/cases/defects.json").read_text())["defects"]}
    assert {k.id for k in known.KNOWN if k.catalog} <= register
    assert all(k.rule for k in known.KNOWN)


@needs_pinned_mlx()
@pytest.mark.parametrize("name", SWEEP_IDS)
def test_each_reproducer_shows_its_defect_on_the_pinned_mlx(name):
    p = subprocess.run([sys.executable, str(SWEEP_PROBES / f"{name}.py")], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "VERDICT: defect present" in p.stdout


def test_explained_only_by_a_matching_declaration():
    assert known.explain("mx.sign", "compile(vjp, shapeless)", "wrong shape").id == "sign__shapeless_grad_shape"
    assert known.explain("mx.flip", "any", "signal SIGSEGV").id == "flip__shapeless_vjp_heap_overflow"
    # negative controls: another transform, another function, another symptom
    assert known.explain("mx.sign", "vjp", "wrong value") is None
    assert known.explain("mx.cos", "compile(vjp, shapeless)", "wrong shape") is None
    assert known.explain("mx.expand_dims", "vmap(forward, in_axes=last)", "wrong value") is None
    assert known.explain("nn.InstanceNorm", "compile(vjp, shapeless)", "wrong shape").limitation


def test_a_second_failure_in_a_known_case_is_its_own_unexplained_finding():
    rec = {"function": "mx.sign", "corner": "generic", "status": "fail", "checks": [
        {"status": "fail", "transform": "compile(vjp, shapeless)", "detail": "shape [2, 4] vs [3, 4]"},
        {"status": "fail", "transform": "vjp", "got": 1.0, "want": 0.0, "detail": ""}]}
    res = run.Sweep()
    res.add(rec)
    found = run.findings(res)
    assert [(f["signature"][1], f["explained"]) for f in found] == [
        ("compile(vjp, shapeless)", "sign__shapeless_grad_shape"), ("vjp", None)]
    assert len(run.unexplained(found)) == 1


def test_as_strided_limitation_is_narrow():
    """as_strided's documented limitation covers its crashes only: a wrong value or shape
    of as_strided, or a crash of another function, stays unexplained."""
    assert known.explain("mx.as_strided", "any", "signal SIGSEGV").limitation
    assert known.explain("mx.as_strided", "vjp", "wrong value") is None
    assert known.explain("mx.as_strided", "jvp", "wrong shape") is None
    assert known.explain("mx.slice", "any", "signal SIGSEGV") is None
