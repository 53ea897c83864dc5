"""harness/oracles/: one module per oracle, one explicit list of them, rows that hold
their functions (never a module name), one answer to "which oracles does this record
fail", and a top level the numpy-only validator can import."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT
from mlx_vjpcheck import oracles
from mlx_vjpcheck.judging import gate_verdict as gate_rules

SUPPORT = {"__init__", "base", "bridge", "recheck", "transforms", "directions"}


def test_every_oracle_module_is_listed_once_and_named_after_its_row():
    files = {p.stem for p in (ROOT / "harness" / "oracles").glob("*.py")} - SUPPORT
    listed = [m.__name__.rsplit(".", 1)[1] for m in oracles.ORACLES]
    assert len(listed) == len(set(listed)) and set(listed) == files
    assert [m.ORACLE.name for m in oracles.ORACLES] == listed == [o.name for o in oracles.BUILT_IN]


def test_rows_hold_their_functions_and_refuse_a_module_name():
    for o in oracles.BUILT_IN:
        assert o.measure is None or callable(o.measure), o.name
        assert o.recheck is None or callable(o.recheck), o.name
    with pytest.raises(ValueError, match="not a name"):   # negative control: the old string hop
        oracles.Oracle("x", "", ("x",), ("run",), ".running.oracles:x", None, confirms=False)


def test_the_held_set_is_the_first_order_oracles_and_the_outcomes():
    assert set(oracles.HELD) == set(oracles.FIRST_ORDER) | {"error", "crashed", "missing"}
    assert set(oracles.FIRST_ORDER) == {"vjp_exception", "reference", "exact_zero", "refusal", "fd_elementwise"}
    assert not {"vmap", "compile", "second_order", "forward_mode"} & set(oracles.HELD)
    assert gate_rules.HELD is oracles.HELD and gate_rules.failing is oracles.failing


def _check(kind, passed):
    return {"name": f"{kind}:a", "kind": kind, "passed": passed}


def test_failing_names_failed_oracles_and_outcomes():
    assert oracles.failing(None) == ["missing"]
    assert oracles.failing({"status": "pass", "checks": [_check("vmap", True)]}) == []
    rec = {"status": "crashed", "error": "process died", "checks": [_check("vmap", False), _check("fd", True)]}
    assert oracles.failing(rec) == ["crashed", "vmap"]
    assert oracles.failing({"status": "error", "error": "E: x", "checks": []}) == ["error"]
    assert oracles.failing({"status": "fail", "checks": [{"name": "grad:a", "passed": False}]}) == ["reference"]
    assert oracles.failing({"status": "fail", "checks": [_check("lunch", False)]}) == ["lunch"]
    assert oracles.failing({"status": "fail", "checks": []}) == ["error"]   # a fail with nothing failed


def test_judged_by_lists_every_oracle_with_a_check_in_table_order():
    rec = {"error": "E: x", "checks": [_check("twice", True), _check("vmap", False), {"name": "forward"}]}
    assert oracles.judged_by(rec) == ["vjp_exception", "reference", "vmap", "backward_twice"]
    assert oracles.judged_by(None) == []


BLOCKED = r'''
import builtins, sys
real = builtins.__import__
def guarded(name, *a, **k):
    if name.split(".")[0] in ("mlx", "rich", "hypothesis"):
        raise ImportError(f"{name} is blocked in this test")
    return real(name, *a, **k)
builtins.__import__ = guarded
sys.path.insert(0, sys.argv[1])
import harness.oracles as o
import harness.cases.reproducer
print(len(o.table()))
'''


def test_every_oracle_module_imports_without_mlx():
    p = subprocess.run([sys.executable, "-c", BLOCKED, str(ROOT)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == str(len(oracles.BUILT_IN)), p.stdout + p.stderr
