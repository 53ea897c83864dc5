"""The gate's parts that need no MLX checkout: MLX's test runners (unittest child,
doctest XML), the pristine-vs-patched rules for scenarios, MLX tests and fuzz
findings (each with a negative control it must reject), the cache's atomic
entries, the bindings build's reading of a configure, the patch's file kinds, and
the replay's comparison. The real flow on an MLX checkout: test_native_real.py.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mlx_vjpcheck.gate import bindings as B
from mlx_vjpcheck.gate import cache as C
from mlx_vjpcheck.gate import inputs as GI
from mlx_vjpcheck.gate import suites as GS
from mlx_vjpcheck.gate import compare as GC
from mlx_vjpcheck.gate import run as GR
from mlx_vjpcheck.gate import variants as nvar
from mlx_vjpcheck.native import build as nb
from mlx_vjpcheck.native import suite as native_suite
from mlx_vjpcheck.gate import mlxtests as M
from mlx_vjpcheck.gate import pyfuzz as PF
from mlx_vjpcheck.gate import replay as R
from mlx_vjpcheck.native.build import Recorder, Unit


# --- MLX's Python tests: the unittest child ----------------------------------------------

TESTS = '''
import os
import unittest
import mlx.core


class TestA(unittest.TestCase):
    def test_pass(self):
        self.assertEqual(mlx.core.answer(), 42)

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_error(self):
        raise ValueError("boom")

    @unittest.skip("not here")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_xfail(self):
        self.assertEqual(1, 2)

    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 2)

    def test_x_crash(self):
        if os.environ.get("CRASH"):
            os.abort()

    def test_z_after_crash(self):
        pass


class TestBrokenFixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("fixture")

    def test_never(self):
        pass
'''


@pytest.fixture
def fake_tests(tmp_path):
    pkg = tmp_path / "pkg" / "mlx"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text("__version__ = '0.0.fake'\ndef answer():\n    return 42\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_fake.py").write_text(TESTS)
    return tmp_path / "pkg", tests


def _execute(pkg, extra_env=None, log=None):
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pkg), str(root)]), **(extra_env or {}))

    def execute(argv, n=None):
        p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=str(pkg))
        if log is not None:
            log.append((argv, p.returncode))
        return p.returncode, p.stdout, p.stderr
    return execute


def test_python_tests_one_outcome_each(fake_tests):
    pkg, tests = fake_tests
    got = M.run_python(tests, _execute(pkg))
    out = {k.split(".")[-1]: v["outcome"] for k, v in got["tests"].items()}
    assert out["test_pass"] == "pass" and out["test_fail"] == "fail" and out["test_error"] == "error"
    assert out["test_skip"] == "skip" and out["test_xfail"] == "xfail" and out["test_sub"] == "fail"
    assert out["test_x_crash"] == "pass" and out["test_z_after_crash"] == "pass"
    # a class fixture that fails is one error outcome under unittest's own name for it
    assert any("setUpClass" in k and v["outcome"] == "error" for k, v in got["tests"].items())
    assert got["mlx"]["version"] == "0.0.fake" and got["processes"] == 1


def test_a_test_that_kills_python_is_one_crashed_outcome(fake_tests):
    pkg, tests = fake_tests
    log = []
    got = M.run_python(tests, _execute(pkg, {"CRASH": "1"}, log))
    out = {k.split(".")[-1]: v for k, v in got["tests"].items()}
    assert out["test_x_crash"]["outcome"] == "crashed" and "SIGABRT" in out["test_x_crash"]["detail"]
    assert out["test_z_after_crash"]["outcome"] == "pass"           # resumed after it
    assert out["test_pass"]["outcome"] == "pass"
    assert got["processes"] == 2 and "--start" in log[1][0]


def test_filter_and_exact_ids(fake_tests, tmp_path):
    pkg, tests = fake_tests
    got = M.run_python(tests, _execute(pkg), pattern_filter="test_pass")
    assert [k.split(".")[-1] for k in got["tests"]] == ["test_pass"]
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps(["test_fake.TestA.test_fail"]))
    got = M.run_python(tests, _execute(pkg), ids_file=ids)
    assert {k: v["outcome"] for k, v in got["tests"].items()} == {"test_fake.TestA.test_fail": "fail"}


# --- MLX's C++ tests: doctest's XML reporter ------------------------------------------------

FAKE_DOCTEST = r'''
import os, sys
cases = [("test one", "a_tests.cpp", "ok"), ("test two", "a_tests.cpp", "fail"),
         ("test, three", "b_tests.cpp", "crash"), ("test four", "b_tests.cpp", "ok")]
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--out="))
first = int(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--first=")), "1"))
with open(out, "w") as fh:
    fh.write('<?xml version="1.0"?>\n<doctest binary="t">\n  <TestSuite>\n')
    for i, (name, f, what) in enumerate(cases, 1):
        if i < first:
            continue
        fh.write(f'    <TestCase name="{name.replace(",", "&#44;")}" filename="/src/tests/{f}" line="{i}">\n')
        fh.flush()
        if what == "crash" and not os.environ.get("NO_CRASH"):
            os.abort()
        ok = "true" if what == "ok" else "false"
        if what == "fail":
            fh.write('      <Expression success="false" type="CHECK"><Original>a == b</Original></Expression>\n')
        fh.write(f'      <OverallResultsAsserts successes="1" failures="{0 if ok == "true" else 1}" test_case_success="{ok}"/>\n')
        fh.write("    </TestCase>\n")
    fh.write('  </TestSuite>\n  <OverallResultsAsserts successes="3" failures="1"/>\n</doctest>\n')
sys.exit(0 if all(w == "ok" for _, _, w in cases) else 1)
'''


@pytest.fixture
def fake_doctest(tmp_path):
    exe = tmp_path / "tests"
    exe.write_text(f"#!{sys.executable}\n" + FAKE_DOCTEST)
    exe.chmod(0o755)
    return exe


def test_cpp_tests_outcomes_and_crash_restart(fake_doctest, tmp_path):
    log = []

    def execute(argv, n=None):
        p = subprocess.run(argv, capture_output=True, text=True)
        log.append(argv)
        return p.returncode, p.stdout, p.stderr
    got = M.run_cpp(fake_doctest, tmp_path, execute)
    out = {k: v["outcome"] for k, v in got["tests"].items()}
    assert out == {"a_tests::test one": "pass", "a_tests::test two": "fail",
                   "b_tests::test, three": "crashed", "b_tests::test four": "pass"}
    assert "a == b" in got["tests"]["a_tests::test two"]["detail"]
    assert got["processes"] == 2 and "--first=4" in log[1]
    only = M.run_cpp(fake_doctest, tmp_path, execute, pattern_filter="a_tests")
    assert set(only["tests"]) == {"a_tests::test one", "a_tests::test two"}
    argv = M.cpp_argv(fake_doctest, "x.xml", 1, only="b_tests::test, three")
    assert "--test-case=test? three" in argv and "--source-file=*b_tests.*" in argv


def test_parse_doctest_skipped_and_unfinished():
    text = ('<TestCase name="s" filename="/t/a.cpp" line="1" skipped="true"/>\n'
            '<TestCase name="x &amp; y" filename="/t/a.cpp" line="2">\n')
    cases, current = M.parse_doctest_xml(text)
    assert cases == [("a::s", "skip", "")] and current == "a::x & y"


# --- MLX tests: pristine vs patched -----------------------------------------------------------

def _t(outcome):
    return {"outcome": outcome}


def test_mlx_tests_pass_to_fail_fails_the_gate_and_is_named():
    pristine = {"a": _t("pass"), "b": _t("fail"), "c": _t("error"), "d": _t("pass"), "e": _t("skip")}
    patched = {"a": _t("fail"), "b": _t("fail"), "c": _t("pass"), "d": _t("pass"), "e": _t("skip")}
    rows = M.compare("python", pristine, patched)
    change = {r["test"]: r["change"] for r in rows}
    assert change == {"a": "regression", "b": "pre-existing", "c": "fixed", "d": "", "e": ""}
    ok, line = M.verdict(rows)
    assert not ok and "1 pass->fail" in line and "python a" in line and "1 failing on both" in line
    # negative control: the same tests without the regression pass the gate
    ok, _ = M.verdict(M.compare("python", pristine, dict(patched, a=_t("pass"))))
    assert ok
    # a test pristine passes that patched never ran fails the gate too
    ok, _ = M.verdict(M.compare("cpp", {"t": _t("pass")}, {}))
    assert not ok


def test_a_regression_that_passes_again_is_flaky_not_blamed():
    rows = M.compare("python", {"a": _t("pass"), "b": _t("pass")}, {"a": _t("error"), "b": _t("fail")})
    calls = []

    def rerun(suite, test, variant):
        calls.append((test, variant))
        return "pass" if test == "a" or variant == "pristine" else "fail"
    reruns = M.confirm(rows, rerun)
    assert {k: v["confirmed"] for k, v in reruns.items()} == {"python:a": False, "python:b": True}
    assert [r["change"] for r in rows] == ["regression", "regression"]   # the rows stay as the runs gave them
    assert len(calls) == 2 * 2 * M.RERUNS
    ok, line = M.verdict(rows, reruns)
    assert not ok and "python b" in line and "1 flaky" in line and "1 pass->fail" in line
    # negative control: without the reruns both are blamed
    assert "2 pass->fail" in M.verdict(rows)[1]


def test_the_patch_s_regression_tests_must_fail_pristine_and_pass_patched():
    """The "handoff" suite (patch/tests, run on both builds): every file needs a test that
    fails on pristine (one passing there beside it is allowed) and all passing patched.
    Negative controls: a file that passes pristine throughout, and one with a test still
    failing patched, each fail the gate and the validator's re-derivation."""
    from mlx_vjpcheck.validation import native as VN
    from mlx_vjpcheck.validation.groups import Group
    good = {"test_x.T.test_a": _t("fail"), "test_x.T.test_b": _t("pass"), "test_y.T.test_c": _t("crashed")}
    fixed = {k: _t("pass") for k in good}
    rows = M.compare("handoff", good, fixed)
    ok, line = M.verdict(rows)
    assert ok and "2/2 files fail pristine and pass patched" in line
    g = Group("t")
    assert VN.check_mlx_tests(g, "mlx-tests.json", {"rows": rows})[0] and not g.failures
    shows_nothing = dict(good, **{"test_y.T.test_c": _t("pass")})
    for pristine, patched, why in ((shows_nothing, fixed, "does not show the defect"),
                                   (good, dict(fixed, **{"test_x.T.test_a": _t("fail")}), "do not pass patched")):
        rows = M.compare("handoff", pristine, patched)
        ok, line = M.verdict(rows)
        assert not ok and why in line
        g = Group("t")
        assert not VN.check_mlx_tests(g, "mlx-tests.json", {"rows": rows})[0]
        assert any(why in f for f in g.failures)


def test_the_validator_takes_a_flaky_mlx_test_from_the_recorded_reruns_by_the_rule():
    """An honest gate whose MLX test failed once on patched and passed its three reruns
    validates; the rule, not the recorded "confirmed" flag, decides. Negative controls:
    reruns that fail again on patched (flag forged to false), reruns of the wrong count,
    and no reruns at all leave the regression standing."""
    from mlx_vjpcheck.judging.gate_verdict import recorded_reruns
    from mlx_vjpcheck.validation import native as VN
    from mlx_vjpcheck.validation.groups import Group
    rows = M.compare("python", {"t.C.test_a": _t("pass")}, {"t.C.test_a": _t("fail")})
    k = "python:t.C.test_a"

    def ok(gate_doc):
        return VN.check_mlx_tests(Group("g"), "mlx-tests.json", {"rows": rows}, recorded_reruns(gate_doc))

    passed, line = ok({"mlx_test_reruns": {k: {"pristine": ["pass"] * 3, "patched": ["pass"] * 3,
                                                "confirmed": True}}})
    assert passed and "1 flaky" in line
    for bad in ({"mlx_test_reruns": {k: {"pristine": ["pass"] * 3, "patched": ["fail"] * 3, "confirmed": False}}},
                {"mlx_test_reruns": {k: {"pristine": ["pass"] * 3, "patched": ["pass"]}}},
                {"mlx_test_reruns": {k: "flaky"}}, {}, None):
        passed, line = ok(bad)
        assert not passed and "1 regressions" in line, bad


def test_series_json_names_each_diff_s_regression_tests(tmp_path):
    """gate/patch.handoff_tests: the tests of the diffs a series lists, or of the one diff
    given; none without a manifest; a named test that is missing is refused."""
    from mlx_vjpcheck.gate import patch as NP
    (tmp_path / "tests").mkdir()
    for n in ("test_a.py", "test_b.py"):
        (tmp_path / "tests" / n).write_text("", encoding="utf-8")
    (tmp_path / "a.diff").write_text("--- a/x\n+++ b/x\n", encoding="utf-8")
    (tmp_path / "series").write_text("a.diff\nb.diff\n", encoding="utf-8")
    manifest = {"patches": [{"file": "a.diff", "tests": ["tests/test_a.py"]},
                            {"file": "b.diff", "tests": ["tests/test_b.py"]}]}
    assert NP.handoff_tests(tmp_path / "a.diff") == []   # no manifest yet
    (tmp_path / "series.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert [p.name for p in NP.handoff_tests(tmp_path / "a.diff")] == ["test_a.py"]
    assert [p.name for p in NP.handoff_tests(tmp_path / "series")] == ["test_a.py", "test_b.py"]
    manifest["patches"][1]["tests"] = ["../elsewhere.py"]
    (tmp_path / "series.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(NP.PatchError):
        NP.handoff_tests(tmp_path / "series")


# --- scenarios: pristine vs patched, the scope -----------------------------------------------

def _row(name, op, pristine, patched, expects=False, **kw):
    return dict({"scenario": name, "op": op, "device": "cpu", "pristine": pristine, "patched": patched,
                 "expects_defect": expects, "source": "catalog", "in_scope": True}, **kw)


def test_only_the_gradient_rules_own_oracles_hold_the_scope():
    """A scoped scenario both builds fail in a second-order (or vmap, compile) check only is
    another rule's defect; in the reference or an exception it is not fixed."""
    comp = {"rows": [_row("g/sorted", "gather_mm", "fail", "pass", True),
                     _row("g/second", "gather_mm", "fail", "fail", True)]}
    other = {"g/second": {"pristine": ["reference", "second_order"], "patched": ["second_order"]}}
    code, line = GC.verdict(comp, None, "harness", other)
    assert code == 0 and "1 of the scope's fail on both only in oracles of other rules" in line
    same = {"g/second": {"pristine": ["reference"], "patched": ["reference", "second_order"]}}
    assert GC.verdict(comp, None, "harness", same)[0] == 1
    assert GC.verdict(comp, None, "harness", None)[0] == 1     # nothing known: every failure holds
    runs = {"pristine": native_suite.NativeRun(records=[
                {"scenario": "x", "status": "fail", "error": None, "checks": [
                    {"name": "hvp:a", "kind": "second_order", "passed": False},
                    {"name": "grad:a", "kind": "reference", "passed": True}]},
                {"scenario": "y", "status": "error", "error": "ValueError: z", "checks": []}]),
            "patched": native_suite.NativeRun(records=[{"scenario": "x", "status": "crashed", "checks": []}])}
    fails = GC.failing_oracles(runs)
    assert fails["y"] == {"pristine": ["error"]} and fails["x"]["patched"] == ["crashed"]
    assert fails["x"]["pristine"] == ["second_order"]       # a check's kind names its oracle


def _gather_fix():
    return {"rows": [_row("g/sorted", "gather_mm", "fail", "pass", True),
                     _row("g/unsorted", "gather_mm", "pass", "pass"),
                     _row("q/sorted", "gather_qmm", "error", "pass", True),
                     _row("pad/value", "pad", "fail", "fail", True),
                     _row("pad/asym", "pad", "pass", "pass")]}


def test_the_gather_fix_passes_and_other_ops_failing_on_both_are_pre_existing():
    comp = _gather_fix()
    code, scope, lines = GC.overall({"comparison": comp})
    assert code == 0 and scope["ops"] == ["gather_mm", "gather_qmm"], lines
    assert "1 fail on both (pre-existing)" in lines[1]


def test_a_wrong_pad_patch_fails_the_gate_naming_the_scenario():
    comp = _gather_fix()
    comp["rows"][4] = _row("pad/asym", "pad", "pass", "fail")
    code, scope, lines = GC.overall({"comparison": comp})
    assert code == 1 and "pad" in scope["ops"] and "regressed: pad/asym" in lines[1]


def test_a_gather_variant_that_leaves_a_defect_fails_the_gate():
    comp = _gather_fix()
    comp["rows"][2] = _row("q/sorted", "gather_qmm", "error", "fail", True)   # gather_qmm left broken
    code, _, lines = GC.overall({"comparison": comp})
    assert code == 1 and "not passing patched: q/sorted" in lines[1]
    # ... even when it changes no gather_qmm scenario at all: the pair is one scope
    comp["rows"][2] = _row("q/sorted", "gather_qmm", "error", "error", True)
    assert GC.overall({"comparison": comp})[0] == 1


def test_a_patch_that_changes_nothing_fails_unless_told():
    comp = {"rows": [_row("g/sorted", "gather_mm", "fail", "fail", True), _row("p", "pad", "pass", "pass")]}
    code, _, lines = GC.overall({"comparison": comp})
    assert code == 1 and "changes no scenario" in lines[-1]
    assert GC.overall({"comparison": comp}, "none")[0] == 0


def test_a_fix_for_another_op_is_scoped_to_it():
    comp = {"rows": [_row("g/sorted", "gather_mm", "fail", "fail", True),
                     _row("h/20", "hadamard_transform", "fail", "pass", True),
                     _row("h/16", "hadamard_transform", "pass", "pass")]}
    code, scope, lines = GC.overall({"comparison": comp})
    assert code == 0 and scope["ops"] == ["hadamard_transform"], lines
    # declared scope: gather_mm must then be fixed as well
    assert GC.overall({"comparison": comp}, ["hadamard_transform", "gather_mm"])[0] == 1


def test_expected_defects_of_strict_ops_must_reproduce():
    comp = {"rows": [_row("g/a", "gather_mm", "pass", "pass", True), _row("g/b", "gather_mm", "fail", "pass", True)]}
    code, _, lines = GC.overall({"comparison": comp})
    assert code == 1 and "not reproduced on pristine: g/a" in lines[1]


def test_mlx_test_regressions_fail_the_whole_gate():
    rows = M.compare("cpp", {"ops_tests::pad": _t("pass")}, {"ops_tests::pad": _t("fail")})
    code, _, lines = GC.overall({"comparison": _gather_fix(), "mlx_tests": {"rows": rows}})
    assert code == 1 and "cpp ops_tests::pad" in lines[-1]


# --- fuzz findings on both builds ---------------------------------------------------------------

def _finding_dir(root: Path, name: str, sig: str, op: str):
    from mlx_vjpcheck.evidence import atomic
    (root / "findings").mkdir(parents=True, exist_ok=True)
    entry = {"signature": sig, "op": op, "gradient": "g", "oracle": "reference", "kind": "wrong-value",
             "form": "", "oracles": ["reference"], "seed": 0, "round": 0, "time_found_s": 1.0,
             "time_minimal_s": 1.0, "cases_before": 1, "shrunk": True, "size": 3, "first_size": 3,
             "found_at": "now", "device": "cpu", "shard": None, "from_database": False,
             "scenario_name": name, "files": {"record": f"findings/{sig}.json", "reproducer": f"findings/{sig}_repro.py"}}
    atomic.write_json(root / "findings" / f"{sig}.json", {"scenario": {"name": name}, "record": {}})
    old = json.loads((root / "findings.json").read_text()) if (root / "findings.json").exists() else []
    atomic.write_json(root / "findings.json", old + [entry])


def test_fuzz_findings_new_or_in_scope_fail_the_gate(tmp_path):
    outs = {"pristine": tmp_path / "p", "patched": tmp_path / "q"}
    outs["patched"].mkdir()
    (outs["patched"] / "findings.json").write_text("[]")
    _finding_dir(outs["pristine"], "s1", "gather_mm__grad-a__reference__wrong-value__x", "gather_mm")
    _finding_dir(outs["pristine"], "s2", "hadamard__grad-a__reference__wrong-value__x", "hadamard_transform")
    checked = {"pristine": {"s1": {"status": "fail"}, "s2": {"status": "fail"}},
               "patched": {"s1": {"status": "pass"}, "s2": {"status": "fail"}}}
    summary = PF.summarize(outs, checked, None, {})
    verdicts = {r["signature"]: r["verdict"] for r in summary["rows"]}
    assert verdicts == {"gather_mm__grad-a__reference__wrong-value__x": "passes patched",
                        "hadamard__grad-a__reference__wrong-value__x": "pre-existing (fails on both, op out of scope)"}
    camp = {v: {"stats": {"cases": 10, "cases_per_s": 1.0}, "findings": []} for v in outs}
    assert PF.verdict(summary, camp)[0] == 0
    # negative controls: a finding only the patched build has, and one in scope still failing
    _finding_dir(outs["patched"], "s3", "pad__grad-a__reference__wrong-value__new", "pad")
    checked["pristine"]["s3"], checked["patched"]["s3"] = {"status": "pass"}, {"status": "fail"}
    code, line = PF.verdict(PF.summarize(outs, checked, None, {}), camp)
    assert code == 1 and "wrong-value__new: NEW on patched" in line
    checked["patched"]["s1"] = {"status": "fail"}
    checked["pristine"]["s3"] = {"status": "fail"}
    code, line = PF.verdict(PF.summarize(outs, checked, ["gather_mm"], {}), camp)
    assert code == 1 and "gather_mm__grad-a__reference__wrong-value__x" in line
    # unless the regression corpus says it is out of the patch's scope
    s = PF.summarize(outs, checked, ["gather_mm"], {"gather_mm__grad-a__reference__wrong-value__x": "a kernel's dtype"})
    assert PF.verdict(s, camp)[0] == 0
    # or only an oracle the gate does not hold the patch to (second order, vmap) flags it
    checked["patched"]["s1"] = {"status": "fail",
                                "signature": "gather_mm__second-status__second_order__exception-X__rhs"}
    row = next(r for r in PF.summarize(outs, checked, ["gather_mm"], {})["rows"] if r["scenario"] == "s1")
    assert row["verdict"].startswith("pre-existing") and "second_order" in row["verdict"]
    checked["patched"]["s1"]["signature"] = "gather_mm__grad-a__reference__wrong-value__rhs"
    row = next(r for r in PF.summarize(outs, checked, ["gather_mm"], {})["rows"] if r["scenario"] == "s1")
    assert row["verdict"] == "in scope, still failing patched"


# --- the cache, the bindings build, the patch ------------------------------------------------------

def test_an_interrupted_cache_entry_leaves_nothing(tmp_path):
    def fill(tmp):
        (tmp / "half.o").write_text("x")
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        C.entry(tmp_path, "k", fill)
    assert list(tmp_path.iterdir()) == []
    path, meta, reused = C.entry(tmp_path, "k", lambda tmp: {"ok": 1})
    assert meta == {"ok": 1} and not reused
    assert C.entry(tmp_path, "k", lambda tmp: {"ok": 2})[1:] == ({"ok": 1}, True)


def test_parallel_cancels_the_rest_after_a_failure():
    started = []

    def one(i):
        started.append(i)
        if i == 0:
            raise KeyboardInterrupt
        return i
    with pytest.raises(KeyboardInterrupt):
        C.parallel(one, range(50), 1)
    assert len(started) < 50


def test_pinned_nanobind_and_missing_prerequisites(tmp_path, monkeypatch):
    (tmp_path / "CMakeLists.txt").write_text(textwrap.dedent("""
        FetchContent_Declare(
          nanobind
          GIT_REPOSITORY https://github.com/wjakob/nanobind.git
          GIT_TAG v2.15.0
          GIT_SHALLOW TRUE)
        """))
    assert B.pinned_nanobind(tmp_path) == "2.15.0"
    monkeypatch.setattr(B, "installed_nanobind", lambda: ("2.9.0", "/x"))
    monkeypatch.setattr(B.shutil, "which", lambda name: "/usr/bin/" + name)
    with pytest.raises(B.BindingsError) as e:
        B.check_prerequisites(tmp_path)
    assert "pins nanobind 2.15.0" in str(e.value) and "pip install nanobind==2.15.0" in str(e.value)
    monkeypatch.setattr(B, "installed_nanobind", lambda: (None, None))
    with pytest.raises(B.BindingsError, match="nanobind is not installed"):
        B.check_prerequisites(tmp_path)


def test_reading_a_configure_groups_units_and_drops_lto(tmp_path):
    src, build, nano = tmp_path / "mlx", tmp_path / "build", tmp_path / "site" / "nanobind"
    for p in (src / "python" / "src", src / "tests", src / "mlx", build, nano / "src"):
        p.mkdir(parents=True)
    entries = [
        {"directory": str(build), "file": str(src / "python/src/array.cpp"),
         "command": f"c++ -DMLX_STATIC -I{src} -O3 -flto=auto -fno-fat-lto-objects -fPIC -o x.o -c {src}/python/src/array.cpp"},
        {"directory": str(build), "file": str(nano / "src/nb_func.cpp"),
         "command": f"c++ -O3 -fPIC -o y.o -c {nano}/src/nb_func.cpp"},
        {"directory": str(build), "file": str(src / "tests/ops_tests.cpp"),
         "command": f"c++ -O3 -fPIE -o z.o -c {src}/tests/ops_tests.cpp"},
        {"directory": str(build), "file": str(src / "mlx/ops.cpp"), "command": f"c++ -c {src}/mlx/ops.cpp"},
        {"directory": str(build), "file": str(build / "gen.cpp"), "command": f"c++ -c {build}/gen.cpp"}]
    (build / "compile_commands.json").write_text(json.dumps(entries))
    (build / "build.ninja").write_text("build core.cpython-399-x.so: LINK a.o\n")
    units, ext = B.read_configure(src, build, str(nano))
    assert {rel: g for rel, (g, _) in units.items()} == {
        "python/src/array.cpp": "core", os.path.realpath(nano / "src/nb_func.cpp"): "extern",
        "tests/ops_tests.cpp": "tests"}
    flags = units["python/src/array.cpp"][1].flags
    assert "-O3" in flags and not any("lto" in f for f in flags) and "-c" not in flags
    assert ext == "core.cpython-399-x.so"


def test_configure_carries_the_users_options_and_stays_offline(tmp_path):
    user = {"CMAKE_BUILD_TYPE": "Release", "MLX_BUILD_METAL": "OFF", "USE_SYSTEM_FMT": "ON",
            "MLX_BUILD_TESTS": "OFF", "FETCHCONTENT_SOURCE_DIR_JSON": "/j", "CMAKE_C_FLAGS_DEBUG": "-g"}
    argv = B.configure_argv(tmp_path / "src", tmp_path / "b", user, {"FETCHCONTENT_SOURCE_DIR_NANOBIND": "/n"})
    assert "-DCMAKE_BUILD_TYPE=Release" in argv and "-DUSE_SYSTEM_FMT=ON" in argv
    assert "-DMLX_BUILD_TESTS=ON" in argv and "-DMLX_BUILD_PYTHON_BINDINGS=ON" in argv
    assert "-DFETCHCONTENT_FULLY_DISCONNECTED=ON" in argv and "-DFETCHCONTENT_SOURCE_DIR_NANOBIND=/n" in argv
    assert not any(a.startswith("-DCMAKE_C_FLAGS_DEBUG") for a in argv)


def test_what_a_patch_may_touch():
    units = {"mlx/primitives.cpp": Unit("mlx/primitives.cpp", "/b", "c++", ())}
    assert GI.classify("mlx/primitives.cpp", units, True) == "mlx"
    assert GI.classify("python/src/ops.cpp", units, True) == "core"
    assert GI.classify("tests/ops_tests.cpp", units, True) == "tests"
    assert GI.classify("python/mlx/nn/layers/linear.py", units, True) == "python"
    assert GI.classify("mlx/primitives.h", units, True) == "header"   # its includers: test_gate_headers.py
    with pytest.raises(GI.InputError, match="not a translation unit"):
        GI.classify("python/src/ops.cpp", units, False)
    with pytest.raises(GI.InputError, match="not a translation unit"):
        GI.classify("README.md", units, True)


# --- replay: recorded against new ----------------------------------------------------------------

def test_replay_compares_records_and_tests():
    chk = {"name": "grad:a", "kind": "reference", "passed": True, "observed": [1.0], "expected": [1.0],
           "atol": 1e-5, "rtol": 1e-5}
    rec = {"records": [{"scenario": "s", "device": "cpu", "status": "pass", "checks": [chk]},
                       {"scenario": "t", "device": "cpu", "status": "fail", "checks": []}]}
    same = R.compare_records({"results-patched.json": rec}, {"results-patched.json": rec})
    assert all(r["reproduced"] for r in same)
    moved = {"records": [dict(rec["records"][0], checks=[dict(chk, observed=[2.0])]),
                         dict(rec["records"][1], status="pass")]}
    rows = R.compare_records({"results-patched.json": rec}, {"results-patched.json": moved})
    assert [r["reproduced"] for r in rows] == [False, False]
    assert rows[0]["problems"][0].startswith("grad:a") and "fail -> pass" in rows[1]["problems"][0]
    tests = {"rows": [{"suite": "cpp", "test": "x", "pristine": "pass", "patched": "fail"}]}
    assert R.compare_tests(tests, tests)[0]["reproduced"]
    again = {"rows": [{"suite": "cpp", "test": "x", "pristine": "pass", "patched": "pass"}]}
    assert R.compare_tests(tests, again)[0]["problems"] == ["patched fail -> pass"]
    # a test the gate ran again and found varying (flaky): any outcome its reruns gave on a
    # build reproduces; negative control: reruns that never passed patched do not excuse a pass
    flaky = {"cpp:x": {"pristine": ["pass"] * 3, "patched": ["pass", "fail", "pass"]}}
    assert R.compare_tests(tests, again, flaky)[0]["reproduced"]
    steady = {"cpp:x": {"pristine": ["pass"] * 3, "patched": ["fail"] * 3}}
    assert not R.compare_tests(tests, again, steady)[0]["reproduced"]
    # a flaky test may also come out otherwise on pristine (an error there): not compared
    erred = {"rows": [{"suite": "cpp", "test": "x", "pristine": "error", "patched": "pass"}]}
    assert R.compare_tests(tests, erred, flaky)[0]["reproduced"]
    assert not R.compare_tests(tests, {"rows": []}, flaky)[0]["reproduced"]   # it must still run


def test_later_re_measurements_run_other_passing_scenarios_first():
    """A gate replay's re-measurements after the first run a few scenarios recorded passing
    before the one measured, a different set each time, so that values depending on what
    the process did before vary. Negative controls: none before the first re-measurement,
    never the measured scenario, never one recorded failing."""
    by = {n: n for n in ("a", "b", "c", "d", "e", "f", "g", "bad")}
    passing = {"a", "b", "c", "d", "e", "f", "g"}
    assert R._perturbers(by, ["a"], 1, passing) == []
    two, three = R._perturbers(by, ["a"], 2, passing), R._perturbers(by, ["a"], 3, passing)
    assert len(two) == len(three) == 3 and two != three
    assert "a" not in two + three and "bad" not in two + three
    assert R._perturbers(by, ["a"], 2, {"a"}) == []


def test_replay_measures_a_record_that_did_not_reproduce_again_in_fresh_processes():
    # The rule of `mlx-vjpcheck replay`: a record whose first measurement disagrees is measured
    # again; values that differ among the measurements (memory read past a buffer) prove
    # nothing either way, values every measurement repeats and the record lacks are caught.
    chk = {"name": "grad:b", "kind": "reference", "passed": False, "observed": [2.0, -31.0], "expected": [2.0, 2.0],
           "atol": 1e-5, "rtol": 1e-5, "deterministic": True}
    rec = {"records": [{"scenario": "s", "device": "cpu", "status": "fail", "checks": [chk]}]}
    first = {"records": [dict(rec["records"][0], checks=[dict(chk, observed=[2.0, 5.0])])]}
    asked = []

    def again_with(values):
        def again(name, names):
            asked.append((name, names))
            v = values[len(asked) - 1]
            return [dict(rec["records"][0], checks=[dict(chk, observed=[2.0, v])])]
        return again
    rows = R.compare_records({"results-pristine.json": rec}, {"results-pristine.json": first},
                             again_with([7.0, 9.0]))
    assert rows[0]["reproduced"] and rows[0]["varying"] == ["grad:b"] and rows[0]["measurements"] == 2
    assert asked == [("results-pristine.json", ["s"])]                  # stopped once it varied
    # negative control: the same other values every time (a record whose values were edited)
    asked.clear()
    rows = R.compare_records({"results-pristine.json": rec}, {"results-pristine.json": first},
                             again_with([5.0, 5.0]))
    assert not rows[0]["reproduced"] and rows[0]["measurements"] == 3 and "other values" in rows[0]["problems"][0]
    # without fresh measurements one differing value is not reproduced (as before), and a record
    # that reproduces at once is never measured again
    assert not R.compare_records({"results-pristine.json": rec}, {"results-pristine.json": first})[0]["reproduced"]
    asked.clear()
    rows = R.compare_records({"results-pristine.json": rec}, {"results-pristine.json": rec}, again_with([]))
    assert rows[0]["reproduced"] and rows[0]["measurements"] == 1 and not asked


def test_a_part_s_link_key_holds_only_the_objects_it_links(tmp_path, monkeypatch):
    # A C++ test unit recompiled against a patched header enters the tests' link, not the
    # package's or the suite's: a gate without the C++ tests reuses the same package.
    from types import SimpleNamespace
    from mlx_vjpcheck.gate import variants as V
    groups = {"mlx/primitives.cpp": "mlx", "python/src/array.cpp": "core", "tests/ops_tests.cpp": "tests"}
    unit = SimpleNamespace(compiler="c++", flags=["-O2"])
    bindings = SimpleNamespace(key="b", extension="core.so",
                               objects=lambda g, replace: [str(o) for r, o in replace.items() if groups[r] == g])
    monkeypatch.setattr(V.native_cache, "entry", lambda root, key, fill, fresh: (Path(root) / key, {}, True))

    def keys(objects, parts=("package", "tests", "suite")):
        gate = SimpleNamespace(unit_group=groups.get, touched={}, first_unit=unit, archive=tmp_path / "libmlx.a",
                               libraries=[], builds_root=tmp_path, archive_sha256="0", fresh=False, jobs=1,
                               rec=None, src=tmp_path)
        (tmp_path / "python" / "mlx").mkdir(parents=True, exist_ok=True)
        return V.link_variant(gate, "patched", objects, parts, bindings, ["suite.o"]).keys
    base = {"mlx/primitives.cpp": "p.o", "python/src/array.cpp": "a.o"}
    with_tests = keys(dict(base, **{"tests/ops_tests.cpp": "t.o"}))
    without = keys(base, ("package", "suite"))
    assert with_tests["package"] == without["package"] and with_tests["suite"] == without["suite"]
    # negative controls: the objects a part does link are in its key
    assert keys(dict(base, **{"tests/ops_tests.cpp": "t2.o"}))["tests"] != with_tests["tests"]
    assert keys(dict(base, **{"python/src/array.cpp": "a2.o"}))["package"] != without["package"]
    assert keys(dict(base, **{"mlx/primitives.cpp": "p2.o"}))["suite"] != without["suite"]


def test_recorder_env_reaches_the_command(tmp_path):
    rec = Recorder(tmp_path)
    e = rec.run("x", [sys.executable, "-c", "import os; print(os.environ['VJP_T'])"], tmp_path,
                env=dict(os.environ, VJP_T="seen"))
    assert (tmp_path / e["stdout"]).read_text().strip() == "seen"


# --- the gate's MLX-test stages end to end, on fake builds ---------------------------------------

def _fake_build(root: Path, name: str, answer: int) -> "nvar.Variant":
    pkg = root / name / "python" / "mlx"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text(f"__version__ = '0.0.{name}'\ndef answer():\n    return {answer}\n")
    binary = root / name / "bin" / "tests"
    binary.parent.mkdir(parents=True)
    binary.write_text(f"#!{sys.executable}\nimport os\nos.environ['NO_CRASH'] = '1'\n" + FAKE_DOCTEST)
    binary.chmod(0o755)
    return nvar.Variant(name, {"package": root / name, "tests": root / name}, {"package": name, "tests": name})


def test_mlx_test_stages_name_a_confirmed_regression(tmp_path, fake_tests):
    _, tests = fake_tests
    src = tmp_path / "checkout"
    (src / "python").mkdir(parents=True)
    os.symlink(tests, src / "python" / "tests")
    built = {"pristine": _fake_build(tmp_path, "pristine", 42), "patched": _fake_build(tmp_path, "patched", 41)}
    gate = GI.Gate(nb.MLX, src, tmp_path, tmp_path / "lib.a", {}, {}, {}, "", [], "as-built", 2,
                  tmp_path / "cache", False, stages=("mlx-python", "mlx-cpp"), commit="0" * 40)
    gate.rec, gate.work = Recorder(tmp_path / "run"), tmp_path / "work"
    gate.work.mkdir()
    results = {(s, v): (GS.run_mlx_python if s == "mlx-python" else GS.run_mlx_cpp)(gate, built[v])
               for s in ("mlx-python", "mlx-cpp") for v in GI.VARIANTS}
    doc, reruns = GR.mlx_tests_document(results, gate, built)
    bad = [r for r in doc["rows"] if r["change"] == "regression"]
    assert [r["test"] for r in bad] == ["test_fake.TestA.test_pass"]
    assert reruns == {"python:test_fake.TestA.test_pass": {"pristine": ["pass"] * 3, "patched": ["fail"] * 3,
                                                           "confirmed": True}}
    assert not doc["passed"] and "python test_fake.TestA.test_pass" in doc["summary"]
    pre = {r["test"] for r in doc["rows"] if r["change"] == "pre-existing"}
    assert "test_fake.TestA.test_fail" in pre and "a_tests::test two" in pre      # fail on both: not blamed
    # each build imported its own mlx, and ran in its own $TMPDIR
    assert {v: results[("mlx-python", v)]["mlx"]["version"] for v in GI.VARIANTS} == \
        {"pristine": "0.0.pristine", "patched": "0.0.patched"}
    ids = {e["id"] for e in gate.rec.entries}
    assert {"mlx-python-pristine", "mlx-python-patched", "mlx-cpp-pristine", "mlx-cpp-patched"} <= ids
    assert sum(i.startswith("rerun-python-") for i in ids) == 6
    assert (gate.cache_root / "mlx-tmp" / f"{'0' * 12}-patched").is_dir()


def test_a_hung_command_is_killed_and_recorded(tmp_path):
    rec = Recorder(tmp_path)
    code = "import sys, time\nprint('{\"start\": 0}', flush=True)\ntime.sleep(60)\n"
    e = rec.run("hang", [sys.executable, "-c", code], tmp_path, idle_timeout=1.0)
    assert e["exit_code"] == -9 and e["seconds"] < 30
    assert "killed as hung" in (tmp_path / e["stderr"]).read_text()
    assert '"start": 0' in (tmp_path / e["stdout"]).read_text()


def test_a_scenario_regression_its_reruns_do_not_confirm_is_flaky():
    comp = _gather_fix()
    comp["rows"][4] = _row("pad/asym", "pad", "pass", "crashed")     # e.g. a hang, once
    flaky = {"pad/asym": {"pristine": ["pass", "pass"], "patched": ["pass", "crashed"], "confirmed": False}}
    code, _, lines = GC.overall({"comparison": comp, "gate": {"scenario_reruns": {"harness": flaky}}})
    assert code == 0 and "1 flaky" in lines[1], lines
    real = {"pad/asym": {"pristine": ["pass", "pass"], "patched": ["fail", "fail"], "confirmed": True}}
    code, _, lines = GC.overall({"comparison": comp, "gate": {"scenario_reruns": {"harness": real}}})
    assert code == 1 and "regressed: pad/asym" in lines[1]


def test_a_flaky_fix_does_not_widen_the_scope():
    comp = _gather_fix()
    comp["rows"] += [_row("b/zero", "broadcast_to", "crashed", "pass"),          # a hang on pristine, once
                     _row("b/other", "broadcast_to", "fail", "fail", True)]
    code, scope, _ = GC.overall({"comparison": comp})
    assert "broadcast_to" in scope["ops"] and code == 1              # taken at its word: b/other unfixed
    flaky = {"b/zero": {"pristine": ["pass", "pass"], "patched": ["pass", "pass"], "confirmed": False}}
    code, scope, lines = GC.overall({"comparison": comp, "gate": {"scenario_reruns": {"harness": flaky}}})
    assert code == 0 and "broadcast_to" not in scope["ops"], lines


def test_defect_classes_the_patch_fixes_are_held_others_are_pre_existing():
    rows = [_row("g/left/1", "gather_mm", "fail", "pass", True), _row("g/left/2", "gather_mm", "fail", "fail", True),
            _row("g/zero", "gather_mm", "crashed", "crashed", True), _row("g/ok", "gather_mm", "pass", "pass")]
    tags = {"g/left/1": ["left_selection"], "g/left/2": ["left_selection"], "g/zero": ["zero_size"]}
    outcome = {"comparison": {"rows": rows}, "gate": {"defect_tags": tags}}
    code, _, lines = GC.overall(outcome)
    # left_selection is held (the patch fixes one of its scenarios): g/left/2 is unfixed
    assert code == 1 and "not passing patched: g/left/2" in lines[1] and "g/zero" not in lines[1], lines
    rows[1] = _row("g/left/2", "gather_mm", "fail", "pass", True)
    code, _, lines = GC.overall(outcome)
    assert code == 0 and "1 fail on both (pre-existing)" in lines[1], lines      # zero_size: another class
    # a new failure on top of an old one is a regression: a crash where pristine failed a second-order check
    rows.append(_row("g/second", "gather_mm", "fail", "crashed"))
    fails = {"g/second": {"pristine": ["second_order"], "patched": ["crashed"]}}
    outcome["gate"]["failing"] = {"harness": fails}
    code, _, lines = GC.overall(outcome)
    assert code == 1 and "regressed: g/second" in lines[1]


def test_fuzz_findings_on_both_builds_are_blamed_only_when_claimed_or_worse(tmp_path):
    outs = {"pristine": tmp_path / "p", "patched": tmp_path / "q"}
    outs["patched"].mkdir()
    (outs["patched"] / "findings.json").write_text("[]")
    sig = "gather_mm__grad-a__reference__wrong-value__lhs-sorted"
    _finding_dir(outs["pristine"], "s1", sig, "gather_mm")
    _finding_dir(outs["pristine"], "s2", "gather_mm__vjp__vjp_exception__crash__zero", "gather_mm")
    _finding_dir(outs["pristine"], "s3", "gather_mm__second-status__second_order__x__lhs", "gather_mm")
    _finding_dir(outs["pristine"], "s4", "gather_mm__grad-b__reference__wrong-value__lhs-sorted", "gather_mm")
    checked = {"pristine": {"s4": {"status": "fail"}, "s1": {"status": "fail", "signature": sig},
                            "s2": {"status": "fail", "signature": "gather_mm__vjp__vjp_exception__crash__zero"},
                            "s3": {"status": "fail", "signature": "gather_mm__second-status__second_order__x__lhs"}},
               "patched": {"s4": {"status": "pass"}, "s1": {"status": "fail", "signature": sig},
                           "s2": {"status": "fail", "signature": "gather_mm__vjp__vjp_exception__crash__zero"},
                           "s3": {"status": "fail", "signature": "gather_mm__vjp__vjp_exception__crash__lhs"}}}
    rows = {r["scenario"]: r["verdict"] for r in PF.summarize(outs, checked, None, {}, {sig})["rows"]}
    assert rows["s1"] == "in scope, still failing patched"          # a class the corpus gives the patch
    assert rows["s2"].startswith("pre-existing")                      # a crash class it does not claim
    assert rows["s3"].startswith("WORSE on patched")                  # second order before, a crash now


# --- replay: each scenario as the gate ran it -------------------------------------------------------

# a corpus entry the series fixes, and one it does not (its row carries the reason)
CORPUS = ("regress/gather_mm__grad-a__reference__wrong-value__lhs-sorted",
          "regress/cumprod__hvp-a__second_order__wrong-value__scan")


def test_a_replay_runs_corpus_entries_as_corpus_entries_and_its_comparison_validates(tmp_path, monkeypatch):
    # scenarios.json holds the gate's scenarios bare (a catalog file): a replay that took
    # them as they load ran every regression-corpus entry as a catalog scenario, and its
    # comparison.json failed validation ("source 'catalog' but the scenario is a regression
    # scenario"; an out-of-scope entry also "in_scope True but this package's regression
    # gives False"). R.main with the builds and runs faked (the executors give the recorded
    # records back); the comparison is GC.comparison over the entries the replay hands the
    # gate, as _build_and_run makes it.
    from types import SimpleNamespace
    from helpers import evidence_fixtures as fx
    from mlx_vjpcheck.evidence import paths
    from mlx_vjpcheck.oracles import FIRST_ORDER
    from mlx_vjpcheck.validation import evidence as validator
    ev = fx.native_dir(tmp_path / "gate", corpus=CORPUS)
    fx.edit_json(ev / "environment.json", lambda env: env.update(
        native={"mlx_checkout_commit": "c" * 40, "opt": "O0", "stages": ["native"]}), remanifest=True)
    rc, said, _ = fx.check(ev)
    assert rc == 0, said                                   # honest gate evidence
    recorded = {v: json.loads((ev / paths.results_for(v)).read_text()) for v in GI.VARIANTS}
    seen = []

    def build_and_run(gate, entries, tmp):
        seen.extend(entries)
        runs = {v: SimpleNamespace(records=recorded[v]["records"], skipped=[]) for v in GI.VARIANTS}
        return {"native_results": json.loads(json.dumps(recorded)),
                "native_comparison": GC.comparison(entries, runs, ["mlx/primitives.cpp"], FIRST_ORDER)}

    def staged_run(gate, out, body, kind, replace):
        import shutil
        shutil.copytree(ev, out)                           # what the run writes again, as recorded
        outcome = body(Path(out))
        (Path(out) / paths.COMPARISON).write_text(json.dumps(outcome["native_comparison"]))
        fx.rewrite_manifest(out)
        return outcome
    gate = SimpleNamespace(stages=("native",), native_dir="", rec=None)
    monkeypatch.setattr(GI, "check_source", lambda src, project: Path(src))
    monkeypatch.setattr(R.environment, "git_commit", lambda src: "c" * 40)
    monkeypatch.setattr(GI, "prepare", lambda *a, **k: gate)
    monkeypatch.setattr(GR, "_build_and_run", build_and_run)
    monkeypatch.setattr(GR, "staged_run", staged_run)
    out = tmp_path / "replay"
    args = SimpleNamespace(replay=str(ev), mlx_source=str(tmp_path), mlx_build=str(tmp_path), out=str(out),
                           replace=False, cache=None, jobs=1, fresh=False, hang_timeout=1,
                           allow_drift=True)   # the fixture environment is not this machine
    assert R.main(args, None, lambda *a: None, validator.check) == 0
    # its run directory validates, and its rows are the gate's, field for field
    rc, said, _ = fx.check(out)
    assert rc == 0 and "comparison.json: 7/7 rows ok" in said, said
    assert json.loads((out / paths.COMPARISON).read_text())["rows"] == \
        json.loads((ev / paths.COMPARISON).read_text())["rows"]
    kinds = {e.scenario.name: (e.kind, e.in_scope) for e in seen}
    # every corpus entry is in scope since the series fixes every register class (patch 19: cumprod)
    assert kinds[CORPUS[0]] == ("regression", True) and kinds[CORPUS[1]] == ("regression", True)
    assert {k for n, k in kinds.items() if n not in CORPUS} == {("catalog", True)}


def test_a_replay_takes_a_scenario_file_s_regression_and_finding_from_the_recorded_rows():
    # a corpus-format file or a finding given with --scenarios is not this package's corpus:
    # the rows (validated; the validator takes such a row's own word) say what it was. A row
    # that names no source and a scenario of another name than the corpus's stay as loaded.
    from mlx_vjpcheck.cases import files as F
    from mlx_vjpcheck.cases import catalog
    cat = catalog.catalog()[:3]
    loaded = F.catalog_entries(cat)
    rows = [{"scenario": cat[0].name, "source": "regression", "in_scope": False, "reason": "not ours",
             "signature": "sig", "recorded_pristine": "error"},
            {"scenario": cat[1].name, "source": "finding"}, {"scenario": cat[2].name}]
    files = {"native/comparison.json": json.dumps({"rows": rows}).encode()}
    got = R.recorded_entries(files, loaded)
    assert [(e.kind, e.expects_defect, e.in_scope, e.reason) for e in got[:2]] == \
        [("regression", True, False, "not ours"), ("finding", True, True, "")]
    assert got[0].meta == {"signature": "sig", "pristine": {"status": "error"}} and got[2] is loaded[2]
    # the shipped corpus entry of a name, only for that same scenario
    corpus = F.regressions()[0]
    other = F.catalog_entries([type(cat[0])(**{**cat[0].__dict__, "name": corpus.scenario.name})])
    got = R.recorded_entries({}, F.catalog_entries([corpus.scenario]))[0]
    assert got == corpus and got.kind == "regression" and got.meta == corpus.meta
    assert R.recorded_entries({}, other)[0].kind == "catalog"
