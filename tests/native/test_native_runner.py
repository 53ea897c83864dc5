"""build_and_test.py's mechanics, end to end, on a tiny C++ library this test writes.

The fixture mirrors the real set-up: a "checkout" with two translation units
(one defines a virtual method), a static archive built from them with a
compile_commands.json and a CMakeCache.txt, a suite that links ahead of the
archive, and a patch for one unit. The fixture has no Python bindings, so the
gate runs its C++ suite only (results in native/). Pristine and patched binaries
must behave differently, and each bad input must give one line and exit 2.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.evidence import manifest
from mlx_vjpcheck.cli import gate as build_and_test
from mlx_vjpcheck.native.build import Project

pytestmark = pytest.mark.skipif(not shutil.which("c++") or not shutil.which("ar"),
                                reason="needs a C++ compiler and ar (.ci/run installs them)")

HEADER = """#pragma once
struct Op {
  virtual ~Op();
  virtual int apply(int i, bool sorted) const;
};
Op* make_op();
"""
FACTORY = """#include "fix/op.h"
Op::~Op() {}
Op* make_op() { return new Op; }
"""
# The pristine unit is wrong on the sorted path, like the defect under test.
APPLY = """#include <cstdlib>
#include "fix/op.h"

int Op::apply(int i, bool sorted) const {
SORTED
  return 2 * i;
}
"""
WRONG = "  if (sorted) return 2 * i + 1;"
# The crash stands in for a native binary dying mid-run; only the pristine unit has it.
WRONG_AND_CRASH = "  if (sorted) return i == 0 ? (std::abort(), 0) : 2 * i + 1;"
# Reads the exported scenarios by scanning for two keys (no JSON library
# needed) and speaks the suite's JSON-lines protocol.
SUITE = r"""#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include "fix/op.h"

static std::vector<std::string> values(const std::string& text, const std::string& key) {
  std::vector<std::string> out;
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    size_t start = at + key.size(), end = text.find_first_of(",}", start);
    out.push_back(text.substr(start, end - start));
  }
  return out;
}

int main(int argc, char** argv) {
  std::ifstream in(argv[1]);
  std::stringstream buf;
  buf << in.rdbuf();
  auto names = values(buf.str(), "\"name\": ");
  auto sorted = values(buf.str(), "\"sorted_indices\": ");
  int start = argc > 2 ? std::atoi(argv[2]) : 0;
  Op* op = make_op();
  for (int i = start; i < int(names.size()); ++i) {
    std::printf("{\"start\": %d}\n", i);
    std::fflush(stdout);
    int y = op->apply(i, sorted[i] == "true"), want = 2 * i;
    const char* ok = y == want ? "true" : "false";
    std::printf("{\"record\": {\"scenario\": %s, \"device\": \"cpu\", \"error\": null, "
                "\"status\": \"%s\", \"seconds\": 0, \"checks\": [{\"name\": \"forward\", "
                "\"kind\": \"reference\", \"passed\": %s, \"observed\": %d, \"expected\": %d, "
                "\"atol\": 0, \"rtol\": 0}]}}\n", names[i].c_str(), y == want ? "pass" : "fail",
                ok, y, want);
    std::fflush(stdout);
  }
  return 0;
}
"""
GOOD_PATCH = """--- a/fix/apply.cpp
+++ b/fix/apply.cpp
@@ -5,2 +5,1 @@ int Op::apply(int i, bool sorted) const {
-  if (sorted) return 2 * i + 1;
   return 2 * i;
"""
NAMES = ("gmm/report_example/joint/sorted", "gmm/report_example/joint/unsorted",
         "gmm/right_identity/sorted")


def _sh(argv, cwd):
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)


def make_fixture(root: Path, crash: bool = False, shared: bool = False):
    src, build, suite = root / "src", root / "build", root / "suite"
    (src / "fix").mkdir(parents=True)
    (build / "CMakeFiles").mkdir(parents=True)
    suite.mkdir()
    (src / "fix" / "op.h").write_text(HEADER)
    (src / "fix" / "op.cpp").write_text(FACTORY)
    line = WRONG_AND_CRASH if crash else WRONG
    (src / "fix" / "apply.cpp").write_text(APPLY.replace("SORTED", line))
    (suite / "main.cpp").write_text(SUITE)
    entries = []
    for unit in ("op", "apply"):
        argv = ["c++", f"-I{src}", "-O2", "-std=c++20", "-fPIC",
                "-o", f"CMakeFiles/{unit}.cpp.o", "-c", str(src / "fix" / f"{unit}.cpp")]
        _sh(argv, build)
        entries.append({"directory": str(build), "command": shlex.join(argv),
                        "file": str(src / "fix" / f"{unit}.cpp")})
    (build / "compile_commands.json").write_text(json.dumps(entries))
    objs = [f"CMakeFiles/{u}.cpp.o" for u in ("op", "apply")]
    if shared:
        _sh(["c++", "-shared", "-o", "libfix.so", *objs], build)
    else:
        _sh(["ar", "rcs", "libfix.a", *objs], build)
    (build / "CMakeCache.txt").write_text(
        f"BUILD_SHARED_LIBS:BOOL={'ON' if shared else 'OFF'}\nCMAKE_CXX_COMPILER:FILEPATH=/usr/bin/c++\n")
    (root / "good.diff").write_text(GOOD_PATCH.replace(WRONG, line))
    project = Project(name="fixture", marker="fix/op.h", archive="libfix.a",
                      shared_names=("libfix.so",), suite_sources=(str(suite / "main.cpp"),),
                      suite_include=str(src), bindings=False)
    return src, build, project


def scenarios():
    by = {s.name: s for s in catalog.catalog()}
    return [by[n] for n in NAMES]


def run(root, project, src, build, patch=None, out=None, extra=()):
    out = out or root / "out"
    argv = ["--mlx-source", str(src), "--mlx-build", str(build), "--patch",
            str(patch or root / "good.diff"), "--out", str(out), "--cache", str(root / "cache"),
            "--replace", *extra]
    return build_and_test.main(argv, project=project, scenarios=scenarios()), out


def one_line_exit_2(capsys, code, *fragments):
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith(("build_and_test: ", "build_and_test.py: ")), err
    for f in fragments:
        assert f in err[0], err[0]
    return err[0]


@pytest.fixture
def fixture(tmp_path):
    src, build, project = make_fixture(tmp_path)
    return tmp_path, src, build, project


def test_pristine_and_patched_differ_and_everything_is_recorded(fixture, capsys):
    root, src, build, project = fixture
    code, out = run(root, project, src, build)
    assert code == 0, capsys.readouterr()
    comp = json.loads((out / "comparison.json").read_text())
    rows = {r["scenario"]: (r["pristine"], r["patched"]) for r in comp["rows"]}
    assert rows == {NAMES[0]: ("fail", "pass"), NAMES[1]: ("pass", "pass"),
                    NAMES[2]: ("fail", "pass")}
    assert comp["units"] == ["fix/apply.cpp"]
    commands = json.loads((out / "commands.json").read_text())
    ids = {c["id"] for c in commands}
    assert {"compile-pristine-fix_apply_cpp", "compile-patched-fix_apply_cpp", "link-pristine",
            "link-patched", "compile-suite-main"} <= ids
    assert {"run-pristine", "run-patched"} <= ids
    for c in commands:
        assert c["exit_code"] == 0 and (out / c["stdout"]).is_file() and (out / c["stderr"]).is_file()
    compile_cmd = next(c for c in commands if c["id"] == "compile-patched-fix_apply_cpp")
    assert "-O2" in compile_cmd["argv"] and "-std=c++20" in compile_cmd["argv"]
    for name in ("results-pristine.json", "results-patched.json", "environment.json",
                 "patch.diff", "scenarios.json"):
        assert (out / name).is_file()
    env = json.loads((out / "environment.json").read_text())
    assert env["native"]["unit_flags"]["fix/apply.cpp"][-1] == "-fPIC"
    assert env["native"]["stages"] == ["native"] and env["subject"] == "mlx checkout"
    listed = {p for _, p in manifest.parse((out / manifest.NAME).read_text())}
    assert listed == set(manifest.files(out))
    # The user's checkout is untouched.
    assert "2 * i + 1" in (src / "fix" / "apply.cpp").read_text()


def _commands(out):
    return {c["id"]: c for c in json.loads((out / "commands.json").read_text())}


def test_an_unchanged_patch_compiles_and_links_nothing(fixture, capsys):
    root, src, build, project = fixture
    first = _commands(run(root, project, src, build)[1])
    assert not any(c.get("cached") for c in first.values())
    code, out = run(root, project, src, build)
    assert code == 0
    again = _commands(out)
    # Every compile and link is replayed from the cache, with its original command line.
    for cid in ("compile-suite-main", "compile-pristine-fix_apply_cpp", "compile-patched-fix_apply_cpp",
                "link-pristine", "link-patched"):
        assert again[cid].get("cached") is True, cid
        # (the first run compiled into the entry's temporary name, renamed once complete)
        assert again[cid]["argv"] == [re.sub(r"/\.([^/]+)\.partial-[^/]+", r"/\1", a)
                                      for a in first[cid]["argv"]]
    fresh = _commands(run(root, project, src, build, extra=("--fresh",))[1])
    assert not any(c.get("cached") for c in fresh.values())


def test_a_changed_patch_recompiles_only_the_patched_unit(fixture, capsys):
    root, src, build, project = fixture
    assert run(root, project, src, build)[0] == 0
    other = root / "other.diff"
    other.write_text(GOOD_PATCH.replace("-  if (sorted) return 2 * i + 1;\n",
                                        "-  if (sorted) return 2 * i + 1;\n+  // the sorted path is the same\n"))
    code, out = run(root, project, src, build, patch=other)
    assert code == 0, capsys.readouterr()
    again = _commands(out)
    assert again["compile-pristine-fix_apply_cpp"].get("cached") is True
    assert again["link-pristine"].get("cached") is True
    assert "cached" not in again["compile-patched-fix_apply_cpp"]
    assert "cached" not in again["link-patched"]


def test_o0_rewrites_the_optimisation_flags(fixture, capsys):
    root, src, build, project = fixture
    code, out = run(root, project, src, build, extra=("--opt", "O0"))
    assert code == 0
    for variant in ("pristine", "patched"):
        argv = _commands(out)[f"compile-{variant}-fix_apply_cpp"]["argv"]
        assert "-O0" in argv and "-O2" not in argv and "-std=c++20" in argv


def test_a_patch_that_fixes_nothing_exits_1(fixture, capsys):
    root, src, build, project = fixture
    noop = root / "noop.diff"
    noop.write_text(GOOD_PATCH.replace("-  if (sorted) return 2 * i + 1;\n",
                                       "-  if (sorted) return 2 * i + 1;\n+  if (sorted) return 2 * i + 3;\n"))
    code, _ = run(root, project, src, build, patch=noop)
    assert code == 1


def test_a_patch_that_breaks_what_pristine_passes_fails_naming_it(fixture, capsys):
    """Negative control: the sorted path fixed, the unsorted one broken."""
    root, src, build, project = fixture
    wrong = root / "wrong.diff"
    wrong.write_text("--- a/fix/apply.cpp\n+++ b/fix/apply.cpp\n@@ -5,2 +5,2 @@ int Op::apply(int i, bool sorted) const {\n"
                     "-  if (sorted) return 2 * i + 1;\n-  return 2 * i;\n+  if (sorted) return 2 * i;\n"
                     "+  return 2 * i + 7;\n")
    code, out = run(root, project, src, build, patch=wrong)
    text = capsys.readouterr().out
    assert code == 1 and f"regressed: {NAMES[1]}" in text, text[-2000:]
    rows = {r["scenario"]: r for r in json.loads((out / "comparison.json").read_text())["rows"]}
    assert rows[NAMES[1]]["pristine"] == "pass" and rows[NAMES[1]]["patched"] == "fail"


def test_not_a_checkout(fixture, capsys):
    root, src, build, project = fixture
    empty = root / "empty"
    empty.mkdir()
    code, out = run(root, project, empty, build)
    one_line_exit_2(capsys, code, "is not a checkout of fixture", "fix/op.h")
    assert not out.exists()


def test_build_without_compile_commands(fixture, capsys):
    root, src, build, project = fixture
    (build / "compile_commands.json").unlink()
    code, out = run(root, project, src, build)
    one_line_exit_2(capsys, code, "lacks compile_commands.json")
    assert not out.exists()


def test_build_without_archive(fixture, capsys):
    root, src, build, project = fixture
    (build / "libfix.a").unlink()
    code, out = run(root, project, src, build)
    one_line_exit_2(capsys, code, "lacks libfix.a")
    assert not out.exists()


def test_shared_build(tmp_path, capsys):
    src, build, project = make_fixture(tmp_path, shared=True)
    code, out = run(tmp_path, project, src, build)
    one_line_exit_2(capsys, code, "was built shared", "BUILD_SHARED_LIBS=OFF")
    assert not out.exists()


def test_patch_that_does_not_apply_names_the_hunk(fixture, capsys):
    root, src, build, project = fixture
    bad = root / "bad.diff"
    bad.write_text(GOOD_PATCH + "@@ -6,2 +5,2 @@\n-  return 3 * i;\n+  return 2 * i;\n }\n")
    code, out = run(root, project, src, build, patch=bad)
    one_line_exit_2(capsys, code, "fix/apply.cpp hunk 2", "does not match")
    assert not out.exists() and not list(root.glob(".out.*"))


def test_compiler_failure_keeps_the_log_and_points_to_it(fixture, capsys):
    root, src, build, project = fixture
    broken = root / "broken.diff"
    broken.write_text(GOOD_PATCH.replace("-  if (sorted) return 2 * i + 1;\n",
                                         "-  if (sorted) return 2 * i + 1;\n+  this is not C++;\n"))
    code, out = run(root, project, src, build, patch=broken)
    line = one_line_exit_2(capsys, code, "compiling patched fix/apply.cpp failed")
    log = Path(line.split("see ")[1])
    assert log == out / "logs" / "compile-patched-fix_apply_cpp.err"
    assert "error" in log.read_text()
    assert not (out / "results-patched.json").exists()
    assert not list((root / "cache" / "native-objects").glob(".*partial*"))   # no half-written entry
    listed = {p for _, p in manifest.parse((out / manifest.NAME).read_text())}
    assert listed == set(manifest.files(out))


def test_a_crash_is_recorded_and_the_other_binary_still_runs(tmp_path, capsys):
    src, build, project = make_fixture(tmp_path, crash=True)
    code, out = run(tmp_path, project, src, build)
    # The pristine unit crashes on a scenario that expects a defect: the defect reproducing.
    assert code == 0, capsys.readouterr()
    pristine = json.loads((out / "results-pristine.json").read_text())
    status = {r["scenario"]: r["status"] for r in pristine["records"]}
    assert status == {NAMES[0]: "crashed", NAMES[1]: "pass", NAMES[2]: "fail"}
    patched = json.loads((out / "results-patched.json").read_text())
    assert {r["status"] for r in patched["records"]} == {"pass"}
    ids = {c["id"] for c in json.loads((out / "commands.json").read_text())}
    assert {"run-pristine", "run-pristine-2", "run-patched"} <= ids


def test_a_patched_crash_fails_the_gate_naming_the_scenario(fixture, capsys):
    root, src, build, project = fixture
    dies = root / "dies.diff"
    dies.write_text(GOOD_PATCH.replace("-  if (sorted) return 2 * i + 1;\n",
                                       "-  if (sorted) return 2 * i + 1;\n"
                                       "+  static int boom = (std::exit(3), 0);\n"))
    # A function-local static runs on the first call, inside scenario 0: recorded as crashed.
    code, out = run(root, project, src, build, patch=dies)
    text = capsys.readouterr().out
    # pristine fails it (a wrong value), patched crashes on it: a new defect on top, named
    assert code == 1 and f"regressed: {NAMES[0]}" in text
    status = {r["scenario"]: r["status"] for r in
              json.loads((out / "results-patched.json").read_text())["records"]}
    assert status[NAMES[0]] == "crashed"


def test_a_binary_dying_before_any_scenario_keeps_its_log(fixture, capsys):
    root, src, build, project = fixture
    at_start = root / "at_start.diff"
    at_start.write_text(GOOD_PATCH + "@@ -7,1 +6,2 @@\n }\n+static int boom = (std::exit(3), 0);\n")
    code, out = run(root, project, src, build, patch=at_start, out=root / "out2")
    line = one_line_exit_2(capsys, code, "patched native suite failed before running a scenario (exit 3)")
    log = Path(line.split("see ")[1])
    assert log == out / "logs" / "run-patched.err" and log.is_file()


# --- scenario files, the regression corpus and the verdict ------------------------------

def _regression_file(path, name, in_scope=True, status="fail", reason=""):
    s = next(x for x in catalog.catalog() if x.name == name)
    d = {"schema": "mlx-vjpcheck/regression/2", "signature": f"sig-{len(name)}", "class": "c",
         "pristine": {"mlx": "0.32.4", "device": "cpu", "status": status}, "in_scope": in_scope,
         "scenario": s.to_dict()}
    if reason:
        d["out_of_scope_reason"] = reason
    path.write_text(json.dumps(d))
    return path


def test_scenario_files_and_out_of_scope_rows(fixture, capsys):
    root, src, build, project = fixture
    (root / "more").mkdir()
    _regression_file(root / "more" / "a.json", NAMES[0], in_scope=False, reason="a kernel, not the VJP")
    _regression_file(root / "more" / "b.json", NAMES[2])
    noop = root / "noop.diff"
    noop.write_text(GOOD_PATCH.replace("-  if (sorted) return 2 * i + 1;\n",
                                       "-  if (sorted) return 2 * i + 1;\n+  if (sorted && i == 0) return 1;\n"))
    out = root / "out"
    argv = ["--mlx-source", str(src), "--mlx-build", str(build), "--patch", str(noop), "--out", str(out),
            "--cache", str(root / "cache"), "--no-catalog", "--scenarios", str(root / "more"), "--replace"]
    code = build_and_test.main(argv, project=project)
    text = capsys.readouterr().out
    assert code == 0, text          # NAMES[0] still fails patched, but it is out of scope
    rows = {r["scenario"]: r for r in json.loads((out / "comparison.json").read_text())["rows"]}
    assert rows[NAMES[0]]["in_scope"] is False and rows[NAMES[0]]["reason"] == "a kernel, not the VJP"
    assert rows[NAMES[0]]["patched"] == "fail" and rows[NAMES[2]]["patched"] == "pass"
    assert rows[NAMES[2]]["source"] == "regression" and rows[NAMES[2]]["recorded_pristine"] == "fail"
    assert "a kernel, not the VJP" in text
    # The same entry in scope makes the gate fail: the patch does not fix it.
    _regression_file(root / "more" / "a.json", NAMES[0])
    code = build_and_test.main(argv, project=project)
    assert code == 1, capsys.readouterr()


@pytest.mark.parametrize("extra, fragment", [
    (("--scenarios", "MISSING"), "no such file or directory"),
    (("--fuzz", "0"), "is not a positive number"),
    (("--fuzz", "5", "--scenarios", "x.json"), "takes no --scenarios"),
    (("--no-catalog",), "no scenarios to run"),
])
def test_bad_scenario_options_exit_2_before_writing(fixture, capsys, extra, fragment):
    root, src, build, project = fixture
    out = root / "out"
    argv = ["--mlx-source", str(src), "--mlx-build", str(build), "--patch", str(root / "good.diff"),
            "--out", str(out), "--cache", str(root / "cache"),
            *[str(root / x) if x == "MISSING" else x for x in extra]]
    code = build_and_test.main(argv, project=project)
    one_line_exit_2(capsys, code, fragment)
    assert not out.exists() and not (root / "cache").exists()


def _row(name, pristine, patched, expects=True, op="gather_mm", **kw):
    return dict({"scenario": name, "op": op, "device": "cpu", "pristine": pristine, "patched": patched,
                 "expects_defect": expects}, **kw)


def test_verdict_rules():
    from mlx_vjpcheck.gate import compare as GC
    from mlx_vjpcheck.judging import gate_verdict as GV
    ok = {"rows": [_row("a", "fail", "pass"), _row("b", "pass", "pass", expects=False)]}
    assert GC.verdict(ok)[0] == 0
    # the scope is the ops whose scenarios change, and then all of gather_mm / gather_qmm
    assert GV.resolve_scope(None, [ok])["ops"] == ["gather_mm", "gather_qmm"]
    assert GC.verdict({"rows": [_row("a", "pass", "pass"), _row("c", "fail", "pass")]})[0] == 1  # not reproduced
    assert GC.verdict({"rows": [_row("a", "fail", "error"), _row("c", "fail", "pass")]})[0] == 1  # not fixed
    assert GC.verdict({"rows": [_row("a", "crashed", "pass")]})[0] == 0          # a crash reproduces it too
    code, line = GC.verdict({"rows": [_row("a", "fail", "pass"), _row("p", "pass", "crashed", False, "pad")]})
    assert code == 1 and "regressed: p" in line                                  # pass -> crash: a regression
    out = _row("o", "fail", "fail", in_scope=False, reason="why")
    code, line = GC.verdict({"rows": [_row("a", "fail", "pass"), out]})
    assert code == 0 and "1 fail on both" in line
    # other ops failing on both builds are pre-existing, not the patch's doing
    pre = _row("h", "fail", "fail", op="hadamard_transform")
    assert GC.verdict({"rows": [_row("a", "fail", "pass"), pre]})[0] == 0
    assert GC.verdict({"rows": [_row("a", "fail", "pass"), pre]},
                     GV.resolve_scope(["hadamard_transform"], []))[0] == 1        # unless the patch claims them
    both = {"pristine": {"gather_mm": True, "gather_qmm": True}, "patched": {"gather_mm": True, "gather_qmm": True}}
    assert GC.verdict(dict(ok, fast_path=both))[0] == 0
    lost = dict(both, patched={"gather_mm": True, "gather_qmm": False})
    code, line = GC.verdict(dict(ok, fast_path=lost))
    assert code == 1 and "gather_qmm" in line and "fast path" in line
    assert GC.verdict(dict(ok, fast_path={"pristine": None, "patched": None}))[0] == 0   # no probe


def test_an_earlier_gate_run_is_replaced_only_with_replace(fixture, capsys):
    root, src, build, project = fixture
    code, out = run(root, project, src, build)
    assert code == 0
    argv = ["--mlx-source", str(src), "--mlx-build", str(build), "--patch", str(root / "good.diff"),
            "--out", str(out), "--cache", str(root / "cache")]
    capsys.readouterr()
    code = build_and_test.main(argv, project=project, scenarios=scenarios())
    one_line_exit_2(capsys, code, "already holds native-gate evidence", "--replace")
    code = build_and_test.main(argv + ["--fuzz", "5"], project=project)
    one_line_exit_2(capsys, code, "native-gate")   # a gate run is not a fuzz run
