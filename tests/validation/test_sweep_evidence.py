"""Sweep evidence: an honest sweep validates and bundles; every forgery of what it
claims (a finding deleted, a record's status flipped, an explained id changed, a
count edited, a failing check's numbers made to pass, a record deleted with every
count made to agree) is rejected, each by the check that re-derives it."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from mlx_vjpcheck.core import jsonio
from mlx_vjpcheck.evidence import atomic, manifest, paths
from mlx_vjpcheck.evidence.load import load
from mlx_vjpcheck.sweep import derive
from mlx_vjpcheck.validation import evidence, sweep as sweep_checks

# Registered classes that fail the same way every run (wrong shapes under vmap); not mx.sign,
# whose shapeless class corrupts the heap of the worker, so a later case of the same worker
# can die (seen: expand_dims at float16, SIGABRT, after sign in one worker)
FUNCTIONS = "mx.add,mx.expand_dims,mx.sin"


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    pytest.importorskip("mlx.core")
    out = tmp_path_factory.mktemp("sweep") / "sw"
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck", "sweep", "--functions", FUNCTIONS, "--jobs", "1",
                        "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def _copy(honest, tmp_path):
    d = tmp_path / "sw"
    shutil.copytree(honest, d)
    return d


def _doc(d):
    return jsonio.loads((d / paths.SWEEP).read_bytes())


def _write(d, doc):
    """The forger's last step: the file rewritten and the manifest hashed again."""
    atomic.write_json(d / paths.SWEEP, doc)
    (d / manifest.NAME).unlink()
    atomic.write_text(d / manifest.NAME, manifest.render(d))


def _failures(d) -> list:
    groups, _ = evidence.validate_all(load(d))
    return [why for g in groups for why in g.failures]


def test_an_honest_sweep_validates_with_its_findings(honest):
    assert _failures(honest) == []
    doc = _doc(honest)
    assert doc["findings"] and any(r["status"] == "pass" for r in doc["records"])


def test_validate_exit_0_and_bundle_counts_the_records_as_tests(honest, tmp_path):
    from mlx_vjpcheck.cli.main import main as cli
    assert cli(["validate", str(honest)]) == 0
    zip_path = tmp_path / "sw.zip"
    assert cli(["bundle", str(honest), "--out", str(zip_path), "--skip-probes"]) == 0
    statement = jsonio.loads((tmp_path / "sw.zip.intoto.json").read_bytes())["predicate"]
    doc = _doc(honest)
    judged = [r for r in doc["records"] if r["status"] != "not applicable"]
    assert len(statement["passedTests"]) + len(statement["failedTests"]) == len(judged)
    assert len(statement["failedTests"]) == sum(r["status"] != "pass" for r in judged) > 0
    assert statement["result"] == "FAILED"
    assert cli(["validate", str(zip_path)]) == 0


def test_a_deleted_finding_is_rejected(honest, tmp_path):
    d = _copy(honest, tmp_path)
    doc = _doc(d)
    gone = doc["findings"].pop(0)["signature"]
    _write(d, doc)
    assert any(f"finding {gone} shown by the records is not listed" in w for w in _failures(d))


def test_a_flipped_record_status_is_rejected(honest, tmp_path):
    d = _copy(honest, tmp_path)
    doc = _doc(d)
    rec = next(r for r in doc["records"] if r["status"] == "fail")
    rec["status"] = "pass"
    _write(d, doc)
    assert any("status 'pass' but" in w and "of its checks fail" in w for w in _failures(d))


def test_a_changed_explained_id_is_rejected(honest, tmp_path):
    d = _copy(honest, tmp_path)
    doc = _doc(d)
    doc["findings"][0]["explained"] = "full__value_scaled"
    _write(d, doc)
    assert any("explained is not" in w for w in _failures(d))
    doc["findings"][0]["explained"] = None   # "new": a registered class hidden as unexplained
    _write(d, doc)
    assert any("explained is not" in w for w in _failures(d))


@pytest.mark.parametrize("edit, says", [
    (lambda doc: doc["findings"][0].__setitem__("cases", doc["findings"][0]["cases"] + 1), "cases is not"),
    (lambda doc: doc["findings"][0]["corners"].pop(), "corners is not"),
    (lambda doc: doc["summary"]["by_status"].__setitem__("pass", doc["summary"]["by_status"]["pass"] + 1), "by_status"),
    (lambda doc: doc["summary"].__setitem__("done", doc["summary"]["done"] - 1), "done"),
    (lambda doc: doc["summary"].__setitem__("planned", doc["summary"]["planned"] + 3), "planned"),
])
def test_an_edited_count_is_rejected(honest, tmp_path, edit, says):
    d = _copy(honest, tmp_path)
    doc = _doc(d)
    edit(doc)
    _write(d, doc)
    assert any(says in w for w in _failures(d))


def test_a_deleted_record_is_rejected_though_every_count_agrees(honest, tmp_path):
    """The plan binding: the forger deletes a failing case and re-derives everything else."""
    d = _copy(honest, tmp_path)
    doc = _doc(d)
    doc["records"].remove(next(r for r in doc["records"] if r["status"] == "fail"))
    doc["findings"] = derive.findings_of(doc["records"])
    doc["summary"].update(done=len(doc["records"]), by_status=derive.by_status(doc["records"]))
    _write(d, doc)
    assert any("planned cases have no record" in w for w in _failures(d))


def test_a_failing_check_must_fail_by_its_own_numbers():
    fail = {"status": "fail", "transform": "vjp", "dtype": "float32", "got": 1.5, "want": 1.0, "allowed": 0.1,
            "bound": 0.0, "detail": "", "index": [0], "input": "x", "output": "out"}
    assert sweep_checks.check_problems(fail) == []
    assert "within allowed" in sweep_checks.check_problems(dict(fail, got=1.05))[0]
    assert sweep_checks.check_problems(dict(fail, got=float("nan"))) == []   # NaN fails, as gradcheck judges
    assert "not finite" in sweep_checks.check_problems(dict(fail, want=float("inf")))[0]
    assert sweep_checks.check_problems(dict(fail, got=[1.5, 0.0], want=[1.0, 0.0])) == []
    shape = dict(fail, got=None, want=None, detail="shape [2] vs [3] without the transform")
    assert sweep_checks.check_problems(shape) == []
    assert sweep_checks.check_problems(dict(shape, detail="")) != []
    assert sweep_checks.check_problems(dict(fail, want=None)) != []


def test_a_pass_edited_into_a_numeric_check_is_rejected(honest, tmp_path):
    d = _copy(honest, tmp_path)
    doc = _doc(d)
    rec = next(r for r in doc["records"] if r["status"] == "fail")
    rec["checks"][0].update(got=1.0, want=1.0, allowed=0.5, detail="")
    _write(d, doc)
    assert any("the check passes by its own numbers" in w for w in _failures(d))


VALIDATE_WITHOUT_MLX = r'''
import builtins, sys
real = builtins.__import__
def guarded(name, *a, **k):
    if name.split(".")[0] in ("mlx", "rich", "hypothesis"):
        raise ImportError(f"{name} is blocked in this test")
    return real(name, *a, **k)
builtins.__import__ = guarded
sys.path.insert(0, sys.argv[1])
from harness.cli.validate import main
sys.exit(main([sys.argv[2]]))
'''


def test_sweep_evidence_validates_without_mlx(honest, tmp_path):
    p = subprocess.run([sys.executable, "-c", VALIDATE_WITHOUT_MLX, str(ROOT), str(honest)],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "sweep:" in p.stdout


def test_an_environment_edited_inside_is_rejected(honest, tmp_path):
    d = _copy(honest, tmp_path)
    doc = _doc(d)
    doc["environment"]["mlx"] = "0.1.0"
    _write(d, doc)
    assert any("is not the environment recorded inside it" in w for w in _failures(d))
