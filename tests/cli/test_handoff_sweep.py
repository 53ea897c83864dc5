"""`mlx-vjpcheck handoff <sweep class>`: a class the sweep found is handed over as the
catalog's are (an issue text in MLX's form, its reproducer from probes/sweep/, and the
patch and test once fixed); an open class's issue quotes an MLX-style regression test
(generated from the reproducer where the register names no test file) that fails while
the defect is present; a limitation's issue carries neither patch nor test. The
validator accepts the folder."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from conftest import ROOT, mlx_version, needs_pinned_mlx, run_cli
from mlx_vjpcheck.cases import register
from mlx_vjpcheck.cli import handoff
from mlx_vjpcheck.evidence import load, paths
from mlx_vjpcheck.sweep import known
from mlx_vjpcheck.validation import evidence

needs_mlx = pytest.mark.skipif(mlx_version() is None, reason="handoff runs each reproducer on the installed MLX")
# the end-to-end handoff takes a sweep class that needs no patch file (not fixed: open or a limitation)
SWEEP_ONE = next((d.id for d in register.sweep_entries(register.load()) if d.status != "fixed"),
                 "slice_update__shapeless_update_grad_shape")
MLX_TESTS = "import unittest\nMLXTestCase = unittest.TestCase\n\n\ndef MLXTestRunner():\n    unittest.main()\n"


def _entry(i=SWEEP_ONE):
    return next(d for d in register.load() if d.id == i)


def _open(i="sign__shapeless_grad_shape"):
    """The class as the register holds an open one (no patch yet), whatever its status now."""
    return dataclasses.replace(_entry(i), state="open", reason="not yet", patch="", regression_test="", gate="")


@pytest.fixture(scope="module")
def sweep_one(tmp_path_factory):
    out = tmp_path_factory.mktemp("handoff") / "sweep"
    p = run_cli("handoff", SWEEP_ONE, "--out", out)
    assert p.returncode == 0, p.stderr
    return out, p


@needs_mlx
def test_a_sweep_class_gets_issue_and_reproducer_and_validates(sweep_one):
    out, p = sweep_one
    d = _entry()
    (e,) = json.loads((out / paths.HANDOFF).read_text())["findings"]
    assert (e["id"], e["op"], e["class"], e["status"]) == (SWEEP_ONE, d.op, d.klass, "not fixed")
    assert set(e["files"]) == {"issue", "reproducer"}
    assert (out / e["files"]["reproducer"]).read_text() == (ROOT / "probes" / "sweep" / f"{SWEEP_ONE}.py").read_text()
    issue = (out / e["files"]["issue"]).read_text()
    assert d.root_cause in issue and d.reproducer().rstrip() in issue and d.reason in issue
    # an open class's issue quotes its MLX-style test; a limitation's neither a patch nor a test
    assert ("mlx_tests.MLXTestCase" in issue) == (d.state == "open")
    assert ("none is asked for" in issue) == (d.state == "limitation")
    assert "mlx-vjpcheck sweep" in issue
    for k in (k for k in known.KNOWN if k.id == SWEEP_ONE):   # where the sweep sees it, from its Known entries
        assert f"`{', '.join(k.functions)}` under `{k.transform}`: {k.symptom}" in issue
    lines, passed = evidence.check(load.load(out))
    assert passed, lines


@needs_pinned_mlx()
def test_the_sweep_issue_quotes_the_defect_on_pinned_mlx(sweep_one):
    out, _ = sweep_one
    e = json.loads((out / paths.HANDOFF).read_text())["findings"][0]
    assert e["reproducer_exit"] == 1
    assert "VERDICT: defect present" in (out / e["files"]["issue"]).read_text()


def _run_test(tmp_path, source: str) -> subprocess.CompletedProcess:
    (tmp_path / "mlx_tests.py").write_text(MLX_TESTS)   # MLX's python/tests helper, as far as this test needs it
    (tmp_path / "test_it.py").write_text(source)
    return subprocess.run([sys.executable, "test_it.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)


@needs_pinned_mlx()
@pytest.mark.parametrize("i", ["sign__shapeless_grad_shape", "flip__shapeless_vjp_heap_overflow"])
def test_the_generated_test_fails_while_the_defect_is_present(tmp_path, i):
    """(flip's defect ends the process: the test still fails, it does not die.)"""
    p = _run_test(tmp_path, handoff.mlx_test(_open(i)))
    assert p.returncode == 1 and "FAILED (failures=1)" in p.stderr, p.stderr[-2000:]


@pytest.mark.skipif(mlx_version() is None, reason="the generated test imports mlx")
def test_negative_control_the_generated_test_passes_when_the_reproducer_says_absent(tmp_path):
    """The same generated test around a reproducer that finds nothing passes: the test's
    verdict is the reproducer's."""
    @dataclasses.dataclass(frozen=True)
    class Fake:
        id: str = "sign__absent"
        title: str = "a control"
        klass: str = "absent"
        regression_test: str = ""

        def reproducer(self):
            return "import sys\nprint('VERDICT: defect absent')\nsys.exit(0)\n"
    p = _run_test(tmp_path, handoff.mlx_test(Fake()))
    assert p.returncode == 0 and "OK" in p.stderr, p.stderr[-2000:]
    source = handoff.mlx_test(Fake()).replace("sys.exit(0)", "sys.exit(1)")   # and one that finds it
    assert _run_test(tmp_path, source).returncode == 1


def test_the_generated_test_holds_the_reproducer_verbatim():
    for d in register.sweep_entries(register.load()):
        d = _open(d.id) if d.state != "limitation" else d   # the generated test (a fixed class has its file)
        src = handoff.mlx_test(d)
        ns = {}
        compile(src, "test.py", "exec")
        exec(compile(src.split("\n\nclass ", 1)[0].replace("import mlx.core as mx\nimport mlx_tests\n", ""),
                     "head.py", "exec"), ns)
        assert ns["REPRODUCER"] == d.reproducer(), d.id


def test_a_limitation_is_an_issue_without_patch_or_test():
    d = dataclasses.replace(_open(), state="limitation",
                            reason="MLX documents that shapeless compile of shape-dependent code may not work "
                                   "(docs/src/usage/compile.rst)")
    assert d.status == "not fixed"
    text = handoff.issue_text(d, "VERDICT: defect present", 1, "0.32.4", "Linux x86_64")
    assert "none is asked for" in text and d.reason in text
    assert "MLXTestCase" not in text and ".diff" not in text
    open_text = handoff.issue_text(_open(), "VERDICT: defect present", 1, "0.32.4", "Linux x86_64")
    assert "MLXTestCase" in open_text   # control: the open class's issue has its test


def test_a_fixed_sweep_class_hands_over_its_patch_and_test(tmp_path, monkeypatch):
    """Once the register says fixed, the handoff copies the patch and the test of the series
    (the files the validator compares), and the issue names them."""
    from mlx_vjpcheck.validation.handoff import expected_files, packaged
    d = dataclasses.replace(_open(), state="fixed", reason="", patch="16-full-vjp-identity.diff",
                            regression_test="tests/test_full_value_scaled.py", gate="a gate line")
    assert set(expected_files(d)) == {"issue", "reproducer", "patch", "regression_test"}
    assert all(p.is_file() for p in packaged(d).values())
    text = handoff.issue_text(d, "", 0, "0.32.4", "Linux x86_64")
    assert "`16-full-vjp-identity.diff`" in text and "`test_full_value_scaled.py`" in text
    assert handoff.mlx_test(d) == (ROOT / "patch" / "tests" / "test_full_value_scaled.py").read_text()


def test_an_unknown_sweep_class_is_one_line_and_exit_2(tmp_path):
    p = run_cli("handoff", "sign__no_such_class", "--out", tmp_path / "out")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert SWEEP_ONE in p.stderr   # the list of known ids names the sweep's classes too


def test_a_crash_class_says_the_process_dies_under_any_transform():
    text = handoff.issue_text(_entry("flip__shapeless_vjp_heap_overflow"), "", 1, "0.32.4", "Linux x86_64")
    assert "`mx.flip` under any transform: the process dies (`signal SIG*`)" in text
