"""The native C++ suite built against the installed wheel agrees with the Python runner.

The build is cached in native/build-test/ (git-ignored), so reruns are a no-op.
"""
from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pytest

from conftest import ROOT, needs_pinned_mlx
from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.native import suite as native_suite
from mlx_vjpcheck.evidence import results
from mlx_vjpcheck.oracles import FIRST_ORDER
from mlx_vjpcheck.core.tensors import index_tensor as idx

NATIVE_OPS = ("gather_mm", "gather_qmm")
# defect classes seen only by oracles the C++ suite does not have (second order)
BUILD_DIR = ROOT / "native" / "build-test"

pytestmark = pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("c++")),
                                reason="needs cmake and a C++20 compiler (.ci/run installs them)")


@pytest.fixture(scope="module")
def binary():
    pytest.importorskip("mlx.core", reason="the wheel build needs the installed mlx package")
    return native_suite.build_wheel(BUILD_DIR)


@pytest.fixture(scope="module")
def both(binary, tmp_path_factory):
    """(scenarios, native run, python records) over the whole catalog."""
    from mlx_vjpcheck.running import runner
    scenarios = catalog.catalog()
    path = native_suite.write_input(scenarios, tmp_path_factory.mktemp("native") / "in.json")
    # the Python runner only where there is something to compare: the ops the C++ suite has
    return scenarios, native_suite.run_binary(binary, path), \
        runner.run([s for s in scenarios if s.op in NATIVE_OPS], ["cpu"])


def test_verdicts_match_python_runner_for_every_scenario(both):
    """The checks both make (the float64 reference, finite differences, the pair loss and
    its Hessian rows) agree one by one, and so does the verdict they give; the Python
    runner's further oracles (second order, vmap, compile, ...) have no C++ counterpart."""
    from mlx_vjpcheck.core import verdict
    scenarios, native, python = both
    nat = {r["scenario"]: r for r in native.records}
    py = {r["scenario"]: r for r in python}
    by = {s.name: s for s in scenarios}
    for name in list(nat):
        nat[name] = native_suite.half_precision(by[name], nat[name])
    for s in scenarios:
        if s.op not in NATIVE_OPS:
            continue
        n, p = nat[s.name], py[s.name]
        if p["status"] == "crashed" and set(s.defect_tags) & set(s.info.fatal_tags):
            # a known defect killed the Python worker (gather_qmm N = 0: SIGFPE); the C++
            # suite may stop at another step of the same call, with an error or a crash
            assert n["status"] in ("crashed", "error") and not n["checks"], s.name
            continue
        mine = {c["name"] for c in n["checks"]}
        shared = [c for c in p["checks"] if c["name"] in mine]
        assert [(c["name"], c["passed"]) for c in n["checks"]] == \
               [(c["name"], c["passed"]) for c in shared], s.name
        assert n["status"] == verdict.status(shared, p.get("error"), crashed=p["status"] == "crashed"), s.name
    assert len(nat) == sum(s.op in NATIVE_OPS for s in scenarios) > 0


def test_the_two_float64_references_agree(both):
    """Independent implementations (C++ loops, Python loops) give the same expected values."""
    _, native, python = both
    py = {r["scenario"]: {c["name"]: c for c in r["checks"]} for r in python}
    compared = 0
    for r in native.records:
        for c in r["checks"]:
            if c["kind"] != "reference" or c["name"] not in py[r["scenario"]]:
                continue
            other = py[r["scenario"]][c["name"]]
            assert c["expected_shape"] == other["expected_shape"]
            np.testing.assert_allclose(np.asarray(c["expected"], dtype=float),
                                       np.asarray(other["expected"], dtype=float),
                                       rtol=1e-12, atol=1e-12)
            compared += 1
    assert compared > 100


def test_other_ops_are_skipped_with_a_reason(both):
    scenarios, native, _ = both
    skipped = {k["scenario"]: k["reason"] for k in native.skipped}
    assert set(skipped) == {s.name for s in scenarios if s.op not in NATIVE_OPS}
    assert all("not implemented by the native suite" in r for r in skipped.values())
    data = native_suite.results_for(scenarios, native, {}, "native-wheel")
    assert data["schema"] == results.SCHEMA and data["kind"] == "native-wheel"
    assert set(data["scenarios"]) == {r["scenario"] for r in native.records}
    assert data["skipped"] == native.skipped


@needs_pinned_mlx()
def test_native_suite_reproduces_the_defects(both):
    scenarios, native, _ = both
    """Every expected defect of a first-order class fails; the transform classes (second
    order, and transpose=False's scales met only at second order) have no C++ oracle."""
    status = {r["scenario"]: r["status"] for r in native.records}

    def first_order(s):
        """Whether a tag the C++ suite can see bites on this call (conditional tags too)."""
        return s.expects_defect_under(FIRST_ORDER)
    ours = [s for s in scenarios if s.op in NATIVE_OPS]
    defects = [s.name for s in ours if s.expects_defect and first_order(s)]
    assert defects and all(status[n] in ("fail", "error", "crashed") for n in defects)
    assert all(status[s.name] == "pass" for s in ours
               if not s.params.get("sorted_indices") and not first_order(s) and not s.must_refuse)
    # negative control: the transform-only scenarios exist and pass natively
    assert any(s.expects_defect and not first_order(s) and status[s.name] == "pass" for s in ours)


def _one(name):
    return next(s for s in catalog.catalog() if s.name == name)


def test_negative_control_a_wrong_expectation_is_rejected(binary, tmp_path):
    """A negative tolerance makes every comparison impossible: each check must fail."""
    s = _one("gmm/matmul_control/unsorted")
    path = tmp_path / "in.json"
    native_suite.write_input([s], path)
    data = json.loads(path.read_text())
    data["tolerances"] = {"reference": {"float32": [-1.0, 0.0]}, "fd": {"float32": [-1.0, 0.0]}}
    path.write_text(json.dumps(data))
    (rec,) = native_suite.run_binary(binary, path).records
    assert rec["status"] == "fail"
    assert rec["checks"] and not any(c["passed"] for c in rec["checks"])


def test_reference_error_is_an_error_record_not_a_crash(binary, tmp_path):
    base = _one("gmm/right_repeat/unsorted")
    s = dataclasses.replace(base, operands=dict(base.operands, rhs_indices=idx([0, 0, 9])))
    path = native_suite.write_input([s], tmp_path / "in.json")
    (rec,) = native_suite.run_binary(binary, path).records
    assert rec["status"] == "error" and "out of range" in rec["error"]


def test_wheel_run_writes_a_run_directory(binary, tmp_path):
    import argparse

    from mlx_vjpcheck.cli import native as native_cmd
    from mlx_vjpcheck.evidence import manifest
    out = tmp_path / "nw"
    args = argparse.Namespace(filter="gmm/report_example/joint/unsorted", out=str(out),
                              build_dir=str(BUILD_DIR), scenarios=[], replace=False)
    assert native_cmd.main(args) == 0
    data = results.load(out / "results.json")
    assert data["kind"] == "native-wheel" and data["summary"]["pass"] == 1
    commands = json.loads((out / "commands.json").read_text())
    assert [c["id"] for c in commands] == ["build-1", "run-1"]
    assert all(c["exit_code"] == 0 for c in commands)
    listed = {p for _, p in manifest.parse((out / manifest.NAME).read_text())}
    assert listed == set(manifest.files(out)) and "scenarios.json" in listed


def test_non_finite_values_follow_the_python_rule(binary, tmp_path):
    """An infinite input: both references give inf / nan where MLX does, the C++ compare
    applies harness/core/checks.py's rule, and every value travels as strict JSON."""
    from mlx_vjpcheck.core import checks, jsonio
    from mlx_vjpcheck.running import runner
    s = _one("gmm/right_repeat/unsorted")
    vals = list(s.operands["a"].values)
    vals[0] = float("inf")
    s = dataclasses.replace(s, name="gmm/right_repeat/inf", operands=dict(
        s.operands, a=dataclasses.replace(s.operands["a"], values=tuple(vals))))
    path = native_suite.write_input([s], tmp_path / "in.json")
    text = path.read_text()
    assert "Infinity" not in text and '"nonfinite": "inf"' in text
    (nat,) = native_suite.run_binary(binary, path).records
    (py,) = runner.run([s], ["cpu"])
    assert [(c["name"], c["passed"]) for c in nat["checks"]] == [(c["name"], c["passed"]) for c in py["checks"]]
    for c in nat["checks"]:
        again = checks.compare(c["name"], c["observed"], c["expected"], c["atol"], c["rtol"], c["kind"])
        assert again["passed"] == c["passed"] and again["reason"] == c["reason"], c["name"]
    assert any(not np.all(np.isfinite(np.asarray(c["expected"], dtype=float))) for c in nat["checks"])
    jsonio.loads(jsonio.dumps(nat))   # round-trips strictly


@needs_pinned_mlx()
def test_negative_control_a_nan_read_from_the_backing_tail_fails(binary, tmp_path):
    """The broadcast-tail defect reading NaN from beyond the logical slice: the observed
    gradient is non-finite where the reference is finite, so the check must fail."""
    from mlx_vjpcheck.running import runner
    s = _one("gmm/backing_tail/pos/sorted")
    a = s.operands["a"]
    s = dataclasses.replace(s, name="gmm/backing_tail/nan/sorted", operands=dict(
        s.operands, a=dataclasses.replace(a, values=(a.values[0], float("nan"), float("nan")))))
    path = native_suite.write_input([s], tmp_path / "in.json")
    (nat,) = native_suite.run_binary(binary, path).records
    (py,) = runner.run([s], ["cpu"])
    grad = next(c for c in nat["checks"] if c["name"] == "grad:b")
    assert not grad["passed"] and "non-finite" in grad["reason"]
    assert nat["status"] == py["status"] == "fail"
