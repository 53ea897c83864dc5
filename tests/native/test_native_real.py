"""Opt-in: the real gate on an MLX checkout and its static CPU build.

Set MLX_SOURCE_ROOT (a checkout of ml-explore/mlx) and MLX_CPU_BUILD (its CMake
build with compile_commands.json and libmlx.a; see native/BUILD.md). The bindings
need nanobind at the version the checkout pins and MLX's C++ tests need doctest
(Debian doctest-dev); the first run compiles them into the cache (minutes).
MLX_VJPCHECK_GATE_FULL=1 also runs every MLX test on both builds in the default
gate (about 6 minutes on 2 cores); otherwise the MLX tests are narrowed to a few.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mlx_vjpcheck.cli import gate as build_and_test

SOURCE, BUILD = os.environ.get("MLX_SOURCE_ROOT"), os.environ.get("MLX_CPU_BUILD")
FULL = os.environ.get("MLX_VJPCHECK_GATE_FULL") == "1"
ROOT = Path(__file__).resolve().parents[2]

# One reason for every test here: the variables unset, or naming no checkout and build.
HAVE = bool(SOURCE and BUILD) and (Path(SOURCE) / "mlx" / "mlx.h").is_file() \
    and (Path(BUILD) / "compile_commands.json").is_file()
pytestmark = pytest.mark.skipif(
    not HAVE,
    reason="set MLX_SOURCE_ROOT and MLX_CPU_BUILD to an MLX checkout and its static CPU build "
           "to run the gate on them (see native/BUILD.md)")


def gate(tmp_path, *extra, out="gate"):
    out = tmp_path / out
    argv = ["--mlx-source", SOURCE, "--mlx-build", BUILD, "--out", str(out), "--opt", "O0", "--replace", *extra]
    return build_and_test.main(argv), out


def diff_of(tmp_path, rel: str, old: str, new: str) -> Path:
    """A unified diff of the checkout's file with one replacement (the checkout is not touched)."""
    text = (Path(SOURCE) / rel).read_text()
    assert text.count(old) == 1, f"{rel}: the text to replace is not there once"
    a, b = tmp_path / "a" / rel, tmp_path / "b" / rel
    a.parent.mkdir(parents=True, exist_ok=True)
    b.parent.mkdir(parents=True, exist_ok=True)
    a.write_text(text)
    b.write_text(text.replace(old, new))
    d = subprocess.run(["diff", "-U1", f"a/{rel}", f"b/{rel}"], cwd=tmp_path, capture_output=True, text=True).stdout
    path = tmp_path / f"{Path(rel).stem}-{abs(hash(new)) % 10**6}.diff"
    path.write_text(d)
    return path


def validates(out: Path) -> str:
    p = subprocess.run([sys.executable, str(ROOT / "validate_artifacts.py"), str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return p.stdout


def test_the_patch_fixes_the_gather_pair_and_breaks_nothing(tmp_path, capsys):
    extra = () if FULL else ("--mlx-tests-filter", "blas")   # test_blas.py and blas_tests.cpp
    code, out = gate(tmp_path, *extra)
    text = capsys.readouterr().out
    assert code == 0, text[-3000:]
    comp = json.loads((out / "comparison.json").read_text())
    rows = comp["rows"]
    assert len({r["op"] for r in rows}) >= 30                      # every op, through the bindings
    gather = [r for r in rows if r["op"] in ("gather_mm", "gather_qmm") and r["in_scope"]]
    assert all(r["pristine"] != "pass" for r in gather if r["expects_defect"])
    assert sum(r["pristine"] != "pass" and r["patched"] == "pass" for r in gather) > 50   # the fix
    assert not [r for r in rows if r["pristine"] == "pass" and r["patched"] != "pass"]
    corpus = [r for r in rows if r["source"] == "regression" and r["in_scope"]]
    assert corpus and all(r["patched"] == "pass" for r in corpus)
    # every entry shows on pristine but those of a class this commit does not have: conv_general's
    # dilated_input_dx_shape is 0.32.4-only (the gate counts them as absent, not as missed)
    absent = {r["scenario"] for r in corpus if r["pristine"] == "pass"}
    assert {r["op"] for r in corpus if r["scenario"] in absent} <= {"conv_general"}, absent
    assert len(absent) < len(corpus) / 10
    native = json.loads((out / "native" / "comparison.json").read_text())
    assert native["fast_path"]["patched"] == {"gather_mm": True, "gather_qmm": True}
    tests = json.loads((out / "mlx-tests.json").read_text())
    assert tests["passed"] and not [r for r in tests["rows"] if r["change"] == "regression"]
    assert {"python", "cpp"} <= {r["suite"] for r in tests["rows"]}
    env = json.loads((out / "environment.json").read_text())
    assert re.fullmatch(r"[0-9a-f]{40}", env["mlx_checkout_commit"]) and env["subject"] == "mlx checkout"
    assert env["native"]["mlx_version_h"] == env["mlx"] and env["native"]["unit_flags"]
    assert env["native"]["bindings"]["nanobind"]
    for c in json.loads((out / "commands.json").read_text()):
        assert (out / c["stderr"]).is_file()
    validates(out)
    # a second gate of the unchanged patch compiles and links nothing
    code, out2 = gate(tmp_path, "--mlx-tests", "none", out="again")
    assert code == 0
    cmds = json.loads((out2 / "commands.json").read_text())
    built = [c for c in cmds if c["id"].startswith(("compile-", "link-", "bindings-"))]
    assert built and all(c.get("cached") for c in built)
    # ... because it is the same build, whatever else the cache holds: each part it links is
    # the first gate's entry (the first gate's C++ test objects are no part of the package's key)
    first, second = (json.loads((o / "gate.json").read_text())["builds"] for o in (out, out2))
    for v in ("pristine", "patched"):
        assert second[v]["parts"] == {p: first[v]["parts"][p] for p in second[v]["parts"]}, (v, first, second)


def test_a_wrong_pad_vjp_is_rejected_naming_its_scenarios(tmp_path, capsys):
    patch = diff_of(tmp_path, "mlx/primitives.cpp",
                    "    start[i] = low_pad_size_[i];\n    stop[i] -= high_pad_size_[i];",
                    "    start[i] = high_pad_size_[i];\n    stop[i] -= low_pad_size_[i];")
    code, out = gate(tmp_path, "--patch", str(patch), "--mlx-tests", "none")
    text = capsys.readouterr().out
    assert code == 1, text[-3000:]
    regressed = [r["scenario"] for r in json.loads((out / "comparison.json").read_text())["rows"]
                 if r["pristine"] == "pass" and r["patched"] != "pass"]
    assert regressed and all(r.startswith("pad/") for r in regressed)
    assert f"regressed: {regressed[0]}" in text
    validates(out)


def test_an_mlx_test_that_passes_pristine_and_fails_patched_fails_the_gate(tmp_path, capsys):
    # A patch to one of MLX's C++ test units (gated like any unit): the pristine test binary
    # passes the test, the patched one fails it.
    text = (Path(SOURCE) / "tests" / "ops_tests.cpp").read_text()
    m = re.search(r'TEST_CASE\("([^"]+)"\) \{\n', text)
    patch = diff_of(tmp_path, "tests/ops_tests.cpp", m.group(0), m.group(0) + "  CHECK(1 == 2);\n")
    code, out = gate(tmp_path, "--patch", str(patch), "--mlx-tests", "cpp", "--fixes", "none",
                     "--no-catalog", "--scenarios", str(ROOT / "harness" / "regressions"))
    said = capsys.readouterr().out
    assert code == 1, said[-3000:]
    rows = json.loads((out / "mlx-tests.json").read_text())["rows"]
    bad = [r for r in rows if r["change"] == "regression"]
    assert [r["test"] for r in bad] == [f"ops_tests::{m.group(1)}"]
    reruns = json.loads((out / "gate.json").read_text())["mlx_test_reruns"]
    assert reruns[f"cpp:ops_tests::{m.group(1)}"] == {"pristine": ["pass"] * 3, "patched": ["fail"] * 3,
                                                       "confirmed": True}
    assert f"cpp ops_tests::{m.group(1)}" in said
    # pre-existing failures (the GGUF tests of a build without GGUF) are listed, not blamed
    assert any(r["change"] == "pre-existing" for r in rows) or all(r["pristine"] == "pass" for r in rows)


def test_a_header_the_gate_cannot_apply_is_refused_in_one_line(tmp_path, capsys):
    # another backend's header (no unit of a CPU build includes it), and one the build turns
    # into the generated JIT preamble
    for rel, anchor in (("mlx/backend/metal/device.h", "namespace mlx::core::metal {"),
                        ("mlx/backend/cpu/simd/base_simd.h", "namespace mlx::core::simd {")):
        patch = diff_of(tmp_path, rel, anchor, anchor + " ")
        code, out = gate(tmp_path, "--patch", str(patch))
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and rel in err[0] and not out.exists(), err


def test_gate_evidence_replays(tmp_path, capsys):
    code, out = gate(tmp_path, "--no-catalog", "--scenarios", str(ROOT / "harness" / "regressions"),
                     "--mlx-tests", "cpp", "--mlx-tests-filter", "ops_tests")
    assert code == 0, capsys.readouterr().out[-3000:]
    validates(out)
    code, again = gate(tmp_path, "--replay", str(out), out="replay")
    said = capsys.readouterr().out
    doc = json.loads((again / "replay.json").read_text())
    # every record comes back with its status; the harness's records and the MLX tests in full,
    # by the replay rule: a record that does not reproduce at once is measured again in fresh
    # processes, and values that differ among the measurements (the pristine rhs-sorted+bcast-left
    # VJPs read memory past the buffer) are not held against it, values that every measurement
    # repeats and the record lacks are (unit-tested: test_gate_parts, the replay tests). The C++
    # suite's backing-tail records read past the buffer too: their failing values vary.
    assert doc["records"] and all(r["recorded"] == r["replayed"] for r in doc["records"]), said[-3000:]
    assert all(r["reproduced"] for r in doc["records"] if not r["file"].startswith("native/"))
    assert doc["mlx_tests"] and all(r["reproduced"] for r in doc["mlx_tests"])
    assert code in (0, 1) and "records and" in said
    validates(again)      # the corpus entries' rows as the gate wrote them: regression rows


def test_replay_refuses_another_commit(tmp_path, capsys):
    code, out = gate(tmp_path, "--no-catalog", "--scenarios", str(ROOT / "harness" / "regressions"),
                     "--mlx-tests", "none")
    assert code == 0
    env_path = out / "environment.json"
    env = json.loads(env_path.read_text())
    env["native"]["mlx_checkout_commit"] = "0" * 40
    env_path.write_text(json.dumps(env))
    code, _ = gate(tmp_path, "--replay", str(out), out="replay")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1       # tampered evidence does not validate, or names the commit


def test_fuzz_both_builds(tmp_path, capsys):
    code, out = gate(tmp_path, "--fuzz", "20", "--fuzz-ops", "gather_mm", out="fuzz")
    said = capsys.readouterr().out
    assert code == 0, said[-3000:]
    summary = json.loads((out / "fuzz-summary.json").read_text())
    assert set(summary["campaigns"]) == {"pristine", "patched"}
    for v in ("pristine", "patched"):
        env = json.loads((out / f"fuzz-{v}" / "environment.json").read_text())
        assert env["subject"] == "mlx checkout" and len(env["mlx_checkout_commit"]) == 40
        assert env["mlx_imported"]["file"].startswith(str(Path.home())) or env["mlx_imported"]["file"]
    validates(out)
