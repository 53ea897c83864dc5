"""Patches to headers, without an MLX build: which units include a touched header (the
build's dependency files, else the compiler's -MM), which header changes are refused
(one line naming the file), and the overlay a patched unit is compiled with, whose
check must reject a compile that still read the checkout's copy."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mlx_vjpcheck.gate import inputs as GI
from mlx_vjpcheck.gate import build as GB
from mlx_vjpcheck.gate import suites as GS
from mlx_vjpcheck.gate import headers as H
from mlx_vjpcheck.native.build import MLX, Unit

CXX = shutil.which("c++") or shutil.which("g++")
needs_cxx = pytest.mark.skipif(CXX is None, reason="no C++ compiler")


def test_make_dependency_files_are_read_with_continuations_and_phony_rules():
    text = ("CMakeFiles/m.dir/a.cpp.o: /s/a.cpp \\\n /s/lib/x.h /s/lib/my\\ dir/y.h\n"
            "/s/lib/x.h:\n")
    rules = H.parse_make_deps(text)
    assert rules == {"CMakeFiles/m.dir/a.cpp.o": ["/s/a.cpp", "/s/lib/x.h", "/s/lib/my dir/y.h"]}


def test_ninja_deps_are_read_object_by_object():
    text = ("o/a.o: #deps 3, deps mtime 1 (VALID)\n    /s/a.cpp\n    /usr/include/c.h\n    /s/lib/x.h\n\n"
            "o/b.o: #deps 1, deps mtime 1 (STALE)\n    /s/b.cpp\n")
    assert H.parse_ninja_deps(text) == {"o/a.o": ["/s/a.cpp", "/usr/include/c.h", "/s/lib/x.h"],
                                        "o/b.o": ["/s/b.cpp"]}


def fake_build(tmp_path: Path) -> tuple:
    """A source tree (lib/x.h included by a.cpp through lib/y.h; b.cpp includes nothing of
    ours), and a build directory with compile_commands.json and Make-style .o.d files."""
    src, build = tmp_path / "src", tmp_path / "build"
    for rel, text in {"lib/x.h": "#pragma once\ninline int f() { return 1; }\n",
                      "lib/y.h": '#pragma once\n#include "lib/x.h"\n',
                      "lib/unused.h": "#pragma once\n",
                      "a.cpp": '#include "lib/y.h"\nint a() { return f(); }\n',
                      "b.cpp": "int b() { return 2; }\n"}.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    (build / "CMakeFiles" / "m.dir").mkdir(parents=True)
    cc = [{"directory": str(build), "file": str(src / n), "command": f"c++ -I{src} -O2 -o CMakeFiles/m.dir/{n}.o "
           f"-c {src / n}"} for n in ("a.cpp", "b.cpp")]
    (build / "compile_commands.json").write_text(json.dumps(cc))
    (build / "CMakeFiles" / "m.dir" / "a.cpp.o.d").write_text(
        f"CMakeFiles/m.dir/a.cpp.o: {src}/a.cpp /usr/include/stdc-predef.h \\\n {src}/lib/y.h {src}/lib/x.h\n")
    (build / "CMakeFiles" / "m.dir" / "b.cpp.o.d").write_text(f"CMakeFiles/m.dir/b.cpp.o: {src}/b.cpp\n")
    return src, build


def test_the_units_including_a_header_come_from_the_builds_dependency_files(tmp_path):
    src, build = fake_build(tmp_path)
    deps = H.from_build(build, src)
    assert deps == {"a.cpp": {"lib/y.h", "lib/x.h"}, "b.cpp": set()}
    # directly or through another header; a header nobody includes selects nothing
    assert H.includers(["lib/x.h"], deps) == ["a.cpp"]
    assert H.includers(["lib/y.h"], deps) == ["a.cpp"]
    assert H.includers(["lib/unused.h"], deps) == []


def test_a_header_is_its_own_group_and_the_unapplicable_ones_are_refused_in_one_line(tmp_path):
    src, build = fake_build(tmp_path)
    units = {"a.cpp": Unit("a.cpp", str(build), "c++", ()), "b.cpp": Unit("b.cpp", str(build), "c++", ())}
    assert GI.classify("lib/x.h", units, True) == "header"
    assert GI.check_headers(build, src, units, {"lib/x.h": "header", "a.cpp": "mlx"}, True)["a.cpp"] == \
        {"lib/x.h", "lib/y.h"}
    assert GI.check_headers(build, src, units, {"b.cpp": "mlx"}, True) == {}
    with pytest.raises(GI.InputError) as e:   # nobody includes it (another backend's header)
        GI.check_headers(build, src, units, {"lib/unused.h": "header"}, True)
    assert "lib/unused.h" in str(e.value) and "no translation unit" in str(e.value) and "\n" not in str(e.value)
    # a header the build turns into a generated source (MLX's CPU JIT preamble)
    (build / "build.ninja").write_text(f"build gen/pre.cpp | ${{w}}gen/pre.cpp: CUSTOM_COMMAND {src}/make.sh "
                                       f"{src}/lib/x.h {src}/lib/y.h\n")
    assert H.generated_inputs(build, src) == {"lib/x.h": "gen/pre.cpp", "lib/y.h": "gen/pre.cpp"}
    with pytest.raises(GI.InputError) as e:
        GI.check_headers(build, src, units, {"lib/x.h": "header"}, True)
    assert "lib/x.h" in str(e.value) and "gen/pre.cpp" in str(e.value) and "\n" not in str(e.value)


@needs_cxx
def test_without_dependency_files_the_compiler_lists_them_once(tmp_path):
    src, build = fake_build(tmp_path)
    unit = Unit("a.cpp", str(build), CXX, (f"-I{src}",))
    got = H.scan(unit, "a.cpp", src, tmp_path / "cache", "digest")
    assert got == {"lib/x.h", "lib/y.h"}
    entries = list((tmp_path / "cache" / "native-objects").glob("deps-*"))
    assert len(entries) == 1
    (src / "lib" / "x.h").unlink()   # cached: the compiler is not asked again for the same inputs
    assert H.scan(unit, "a.cpp", src, tmp_path / "cache", "digest") == got
    with pytest.raises(H.HeaderError) as e:   # a changed text is scanned again, and fails in one line
        H.scan(unit, "a.cpp", src, tmp_path / "cache", "other")
    assert "a.cpp" in str(e.value) and "\n" not in str(e.value)


def header_gate(tmp_path, src, build, units, build_deps) -> GI.Gate:
    touched = {"lib/x.h": ("", "#pragma once\ninline int f() { return 2; }\n")}
    return GI.Gate(MLX, src, build, build / "libm.a", units, touched, {"lib/x.h": "header"}, "", [], "as-built",
                  1, tmp_path / "cache", False, ("native",), build_deps=build_deps)


@needs_cxx
def test_every_includer_is_selected_from_dependency_files_or_the_compiler(tmp_path):
    src, build = fake_build(tmp_path)
    units = {n: Unit(n, str(build), CXX, (f"-I{src}",)) for n in ("a.cpp", "b.cpp")}
    gate = header_gate(tmp_path, src, build, units, H.from_build(build, src))
    assert GB.resolve_header_units(gate) == {"a.cpp": "mlx"}
    # the build's files say nothing (a build without them): -MM finds the same unit
    gate = header_gate(tmp_path, src, build, units, {})
    assert GB.resolve_header_units(gate) == {"a.cpp": "mlx"}
    assert gate.header_texts == {"lib/x.h": "#pragma once\ninline int f() { return 2; }\n"}
    # a touched unit is compiled anyway (pristine and patched): not listed twice
    gate.touched["a.cpp"] = ("x", "y")
    assert GB.resolve_header_units(gate) == {}


@needs_cxx
def test_nobody_including_the_header_after_scanning_is_a_step_failure(tmp_path):
    src, build = fake_build(tmp_path)
    units = {"b.cpp": Unit("b.cpp", str(build), CXX, (f"-I{src}",))}
    gate = header_gate(tmp_path, src, build, units, {})
    with pytest.raises(GI.StepFailed, match="lib/x.h"):
        GB.resolve_header_units(gate)


def compile_with_overlay(tmp_path, src, unit_rel) -> list:
    texts = {"lib/x.h": "#pragma once\ninline int f() { return 2; }\n"}
    work = tmp_path / "work"
    overlay = H.write_overlay(work, texts)
    import subprocess
    argv = [CXX, *H.overlay_flags(overlay, work / "u.d"), f"-I{src}", "-c", str(src / unit_rel),
            "-o", str(work / "u.o")]
    assert subprocess.run(argv, cwd=work).returncode == 0
    return H.pristine_reads(work / "u.d", str(work), src, texts)


@needs_cxx
def test_the_overlay_shadows_the_checkouts_header_and_a_relative_include_is_caught(tmp_path):
    src, _ = fake_build(tmp_path)
    assert compile_with_overlay(tmp_path, src, "a.cpp") == []
    # negative control: a unit beside the header including it by a relative path reads the
    # checkout's copy (the overlay cannot shadow it): the check must say so
    (src / "lib" / "rel.cpp").write_text('#include "x.h"\nint r() { return f(); }\n')
    assert compile_with_overlay(tmp_path, src, "lib/rel.cpp") == ["lib/x.h"]


def test_the_evidence_names_the_headers_and_the_recompiled_units():
    doc = H.summary({"lib/x.h": "t"}, {"a.cpp": "mlx", "python/src/ops.cpp": "core", "tests/t.cpp": "tests"})
    assert doc == {"headers": ["lib/x.h"], "units": {"core": ["python/src/ops.cpp"], "mlx": ["a.cpp"],
                                                     "tests": ["tests/t.cpp"]}}


# --- a patch that edits MLX's own Python tests ------------------------------------------------

OLD_TESTS = '''
import unittest


def helper():
    return 1


class TestA(unittest.TestCase):
    def test_same(self):
        self.assertEqual(helper(), 1)

    def test_expectation(self):
        self.assertEqual(0.0, 0.0)

    def test_removed(self):
        pass
'''


def test_the_tests_a_patch_edits_are_named_by_their_methods():
    from mlx_vjpcheck.gate import mlxtests as M
    new = OLD_TESTS.replace("self.assertEqual(0.0, 0.0)", "self.assertEqual(-1.0, -1.0)") \
        .replace("    def test_removed(self):\n        pass\n", "    def test_added(self):\n        pass\n") \
        .replace("return 1", "return 1  # a helper's edit names no test")
    assert M.edited_tests("python/tests/test_x.py", OLD_TESTS, new) == [
        "test_x.TestA.test_added", "test_x.TestA.test_expectation", "test_x.TestA.test_removed"]
    assert M.edited_tests("python/tests/test_x.py", OLD_TESTS, OLD_TESTS) == []


def test_an_edited_test_is_said_in_the_verdict_and_never_hides_a_regression():
    from mlx_vjpcheck.gate import mlxtests as M
    rows = M.compare("python", {"t.A.test_e": {"outcome": "pass"}, "t.A.test_n": {"outcome": "pass"}},
                     {"t.A.test_e": {"outcome": "pass"}, "t.A.test_n": {"outcome": "fail"}})
    rows[0]["edited"] = {"old_on_patched": "fail"}
    ok, line = M.verdict(rows)
    # the old expectation failing on patched is listed with both outcomes ...
    assert "1 edited by the patch: t.A.test_e (old: pass pristine, fail patched; new: pass patched)" in line
    # ... and an unedited test going from pass to fail still fails the gate
    assert not ok and "1 pass->fail" in line
    # negative control: the new version of an edited test failing on patched is a regression too
    rows = M.compare("python", {"t.A.test_e": {"outcome": "pass"}}, {"t.A.test_e": {"outcome": "fail"}})
    rows[0]["edited"] = {"old_on_patched": "fail"}
    assert M.verdict(rows)[0] is False


def test_the_patched_build_runs_a_patched_copy_of_the_tests(tmp_path):
    src = tmp_path / "src"
    (src / "python" / "tests").mkdir(parents=True)
    (src / "python" / "tests" / "test_x.py").write_text(OLD_TESTS)
    (src / "python" / "tests" / "mlx_tests.py").write_text("# helper\n")
    new = OLD_TESTS.replace("0.0, 0.0", "-1.0, -1.0")
    units = {}
    assert GI.classify("python/tests/test_x.py", units, True) == "mlx-tests"
    assert GI.classify("python/tests/test_x.py", units, False) == "mlx-tests"   # not compiled: kept aside
    with pytest.raises(GI.InputError):   # negative control: other Python files still need the bindings
        GI.classify("python/mlx/nn/x.py", units, False)
    gate = GI.Gate(MLX, src, tmp_path, tmp_path / "libm.a", units, {"python/tests/test_x.py": (OLD_TESTS, new)},
                  {"python/tests/test_x.py": "mlx-tests"}, "", [], "as-built", 1, tmp_path / "cache", False,
                  ("mlx-python",))
    gate.work = tmp_path / "work"
    gate.work.mkdir()
    assert GS.tests_dir(gate, "pristine") == src / "python" / "tests"
    patched = GS.tests_dir(gate, "patched")
    assert (patched / "test_x.py").read_text() == new and (patched / "mlx_tests.py").is_file()
    assert (src / "python" / "tests" / "test_x.py").read_text() == OLD_TESTS   # the checkout untouched
    assert GS.edited_tests(gate) == ["test_x.TestA.test_expectation"]
