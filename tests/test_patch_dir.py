"""The patch series under patch/ (repository data, not a stage, so at tests/): `series`
lists every diff exactly once and agrees with series.json; each diff is a
well-formed unified diff that touches only MLX's library sources (mlx/); every
finding the register marks fixed names a patch of the series and an existing
regression test; every regression test compiles, is an MLX-style unittest and
compares against literal expected values. Each checker is also shown a
corrupted input it must reject."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from conftest import ROOT
from mlx_vjpcheck.cases import register

PATCH = ROOT / "patch"
HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
# MLX's library, or one of its Python test files (a fix may correct a test asserting the defect)
SAFE_PATH = re.compile(r"mlx/(?:[A-Za-z0-9_.+-]+/)*[A-Za-z0-9_.+-]+|python/tests/[A-Za-z0-9_]+\.py")
IMPORTS = {"unittest", "math", "numpy", "mlx.core", "mlx_tests"}   # what MLX's python/tests use


# --- the checkers: each returns a list of problems (empty: fine) --------------------------------

def series_problems(series_text: str, series_json: dict, diffs: list) -> list:
    listed = series_text.split()
    problems = [f"{n} is listed {listed.count(n)} times" for n in sorted(set(listed)) if listed.count(n) > 1]
    problems += [f"{n} is listed but not in patch/" for n in listed if n not in diffs]
    problems += [f"{n} is in patch/ but not listed" for n in diffs if n not in listed]
    if series_text != "".join(f"{n}\n" for n in listed):
        problems.append("series is not one file name per line")
    in_json = [p.get("file") for p in series_json.get("patches", [])]
    if in_json != listed:
        problems.append(f"series.json lists {in_json}, series {listed}")
    if series_json.get("schema") != "mlx-vjpcheck/patch-series/1":
        problems.append(f"series.json schema {series_json.get('schema')!r}")
    if not re.fullmatch(r"[0-9a-f]{40}", str(series_json.get("base"))):
        problems.append("series.json names no base commit")
    return problems


def diff_problems(text: str) -> tuple:
    """(problems, files touched) for one unified diff (git format: diff --git, ---, +++, @@ hunks)."""
    problems, touched = [], []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        problems.append("does not end with a newline")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            i += 1
            continue
        if line.startswith(("index ", "new file mode", "deleted file mode", "similarity", "rename ")):
            i += 1
            continue
        if line.startswith("--- "):
            if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
                problems.append(f"line {i + 1}: '---' without '+++'")
                break
            old, new = line[4:].split("\t")[0], lines[i + 1][4:].split("\t")[0]
            for side, name, prefix in (("old", old, "a/"), ("new", new, "b/")):
                path = name[len(prefix):] if name.startswith(prefix) else None
                if name == "/dev/null":
                    continue
                if path is None or not SAFE_PATH.fullmatch(path) or ".." in path.split("/"):
                    problems.append(f"line {i + 1}: {side} file {name!r} is not under mlx/")
            touched.append(new[2:] if new.startswith("b/") else old[2:])
            i += 2
            if i >= len(lines) or not lines[i].startswith("@@"):
                problems.append(f"line {i + 1}: a file header without a hunk")
            continue
        if line.startswith("@@"):
            m = HUNK.match(line)
            if not m:
                problems.append(f"line {i + 1}: malformed hunk header {line!r}")
                break
            want_old = int(m.group(2) if m.group(2) is not None else 1)
            want_new = int(m.group(4) if m.group(4) is not None else 1)
            got_old = got_new = 0
            i += 1
            while i < len(lines) and (got_old < want_old or got_new < want_new):
                body = lines[i]
                if body.startswith("\\"):
                    i += 1
                    continue
                tag = body[:1]
                if tag == " ":
                    got_old, got_new = got_old + 1, got_new + 1
                elif tag == "-":
                    got_old += 1
                elif tag == "+":
                    got_new += 1
                else:
                    break
                i += 1
            while i < len(lines) and lines[i].startswith("\\"):
                i += 1
            if (got_old, got_new) != (want_old, want_new):
                problems.append(f"hunk {line!r}: {got_old} old / {got_new} new lines, header says "
                                f"{want_old} / {want_new}")
            continue
        problems.append(f"line {i + 1}: not part of a unified diff: {line[:60]!r}")
        break
    if not touched:
        problems.append("touches no file")
    return problems, touched


def register_problems(defects: list, listed: list, patch_dir: Path) -> list:
    problems = []
    for d in defects:
        if d.status != "fixed":
            continue
        if d.patch not in listed:
            problems.append(f"{d.id}: patch {d.patch!r} is not in the series")
        if not (patch_dir / d.regression_test).is_file():
            problems.append(f"{d.id}: regression test {d.regression_test!r} does not exist")
    return problems


def _literal(node, names: dict, loop: frozenset = frozenset()) -> bool:
    """A value written out in the test: constants, containers, arithmetic, comparisons and
    comprehensions over them, mx.array / math.* of them, dtypes, or a name bound to such a
    value earlier in the same test. A call to anything else (a reference rule) is not."""
    def lit(n):
        return _literal(n, names, loop)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, complex, str, bool, type(None)))
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(lit(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and lit(k) for k in node.keys) and all(lit(v) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return lit(node.operand)
    if isinstance(node, ast.BinOp):
        return lit(node.left) and lit(node.right)
    if isinstance(node, ast.Compare):
        return lit(node.left) and all(lit(c) for c in node.comparators)
    if isinstance(node, ast.IfExp):
        return lit(node.test) and lit(node.body) and lit(node.orelse)
    if isinstance(node, ast.Name):
        return node.id in names or node.id in loop
    if isinstance(node, ast.Attribute):   # mx.float32, math.pi
        return isinstance(node.value, ast.Name) and node.value.id in ("mx", "math") and node.attr != "array"
    if isinstance(node, ast.Call):
        f = ast.unparse(node.func)
        return (f == "mx.array" or f.startswith("math.")) and all(lit(a) for a in node.args) and \
            all(lit(k.value) for k in node.keywords)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        inner = set(loop)
        for gen in node.generators:
            if not (_literal(gen.iter, names, frozenset(inner)) and isinstance(gen.target, ast.Name)):
                return False
            inner.add(gen.target.id)
        inner = frozenset(inner)
        return _literal(node.elt, names, inner) and \
            all(_literal(c, names, inner) for g in node.generators for c in g.ifs)
    return False


def _against_literal(call, names: dict) -> bool:
    """self.assertX(got, want) with a literal want (either side), self.assertRaises, or
    self.assertTrue(mx.allclose(got, want)) / array_equal with a literal want."""
    if call.func.attr.startswith("assertRaises"):
        return True
    if any(_literal(a, names) for a in call.args[:2]):
        return True
    if call.func.attr in ("assertTrue", "assertFalse") and call.args and isinstance(call.args[0], ast.Call):
        inner = call.args[0]
        return ast.unparse(inner.func) in ("mx.allclose", "mx.array_equal", "mx.isclose") and \
            any(_literal(a, names) for a in inner.args)
    return False


def regression_test_problems(source: str, name: str) -> list:
    """Compiles; imports only unittest, math, numpy, mlx.core and mlx_tests; one
    mlx_tests.MLXTestCase class or more; every test method makes an assertion against
    a literal expected value (no reference computation), or checks that a call raises."""
    try:
        tree = ast.parse(source, name)
        compile(tree, name, "exec")
    except SyntaxError as e:
        return [f"{name}: does not compile: {e}"]
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            problems += [f"{name}: imports {a.name}" for a in node.names if a.name not in IMPORTS]
        elif isinstance(node, ast.ImportFrom):
            problems.append(f"{name}: imports from {node.module}")
    classes = [c for c in tree.body if isinstance(c, ast.ClassDef)
               and any(ast.unparse(b) == "mlx_tests.MLXTestCase" for b in c.bases)]
    if not classes:
        problems.append(f"{name}: no mlx_tests.MLXTestCase class")
    for c in classes:
        tests = [f for f in c.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test")]
        if not tests:
            problems.append(f"{name}: {c.name} has no test method")
        for f in tests:
            names = {}
            for n in ast.walk(f):
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                        and _literal(n.value, names):
                    names[n.targets[0].id] = n.value
            calls = [n for n in ast.walk(f) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                     and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
                     and n.func.attr.startswith("assert")]
            literal = [n for n in calls if _against_literal(n, names)]
            if not literal:
                problems.append(f"{name}: {c.name}.{f.name} makes no assertion against a literal value")
    if "mlx_tests.MLXTestRunner()" not in source:
        problems.append(f"{name}: does not end with mlx_tests.MLXTestRunner()")
    return problems


# --- the series as it is ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def series():
    text = (PATCH / "series").read_text(encoding="utf-8")
    return text, json.loads((PATCH / "series.json").read_text(encoding="utf-8"))


def _diffs() -> list:
    return sorted(p.name for p in PATCH.glob("*.diff"))


def test_series_lists_every_diff_once_and_matches_series_json(series):
    assert series_problems(*series, _diffs()) == []


@pytest.mark.parametrize("name", _diffs() + [f"extra/{p.name}" for p in sorted((PATCH / "extra").glob("*.diff"))])
def test_each_diff_is_well_formed_and_touches_only_mlx(name):
    problems, touched = diff_problems((PATCH / name).read_text(encoding="utf-8"))
    assert problems == []
    assert all(t.startswith("mlx/") or t.startswith("python/tests/") for t in touched)


def test_series_json_units_are_what_each_diff_touches(series):
    _, doc = series
    for p in doc["patches"]:
        _, touched = diff_problems((PATCH / p["file"]).read_text(encoding="utf-8"))
        assert sorted(set(touched)) == sorted(p["units"]), p["file"]
        for t in p["tests"]:
            assert (PATCH / t).is_file(), (p["file"], t)


def test_every_fixed_finding_names_a_patch_of_the_series_and_its_test(series):
    listed = series[0].split()
    defects = register.load()
    assert register_problems(defects, listed, PATCH) == []
    # and series.json says the same: the patch lists the finding (op, class) and its test
    by_file = {p["file"]: p for p in series[1]["patches"]}
    for d in defects:
        if d.status == "fixed":
            p = by_file[d.patch]
            assert {"op": d.op, "class": d.klass} in p["findings"], d.id
            assert d.regression_test in p["tests"], d.id


@pytest.mark.parametrize("path", sorted(PATCH.glob("tests/test_*.py")) + sorted(PATCH.glob("extra/tests/test_*.py")),
                         ids=lambda p: p.name)
def test_each_regression_test_compiles_and_uses_literal_expected_values(path):
    assert regression_test_problems(path.read_text(encoding="utf-8"), path.name) == []


def test_every_regression_test_belongs_to_a_patch(series):
    named = {t for p in series[1]["patches"] for t in p["tests"]}
    assert {f"tests/{p.name}" for p in PATCH.glob("tests/test_*.py")} == named


# --- negative controls: each checker rejects what it is there to reject -------------------------

@pytest.mark.parametrize("corrupt, says", [
    (lambda s: s + s.split()[1] + "\n", "listed 2 times"),
    (lambda s: "\n".join(s.split()[1:]) + "\n", "not listed"),
    (lambda s: s.replace(s.split()[2], "99-no-such.diff"), "not in patch/"),
    (lambda s: "\n".join(reversed(s.split())) + "\n", "series.json lists"),
    (lambda s: s.replace("\n", " "), "one file name per line"),
])
def test_a_corrupted_series_is_rejected(series, corrupt, says):
    text, doc = series
    problems = series_problems(corrupt(text), doc, _diffs())
    assert any(says in p for p in problems), problems


def test_a_series_json_without_base_is_rejected(series):
    text, doc = series
    assert any("base" in p for p in series_problems(text, dict(doc, base="main"), _diffs()))


GOOD = ("diff --git a/mlx/x.cpp b/mlx/x.cpp\n--- a/mlx/x.cpp\n+++ b/mlx/x.cpp\n"
        "@@ -1,2 +1,2 @@\n a\n-b\n+c\n")


@pytest.mark.parametrize("text, says", [
    (GOOD.replace("mlx/x.cpp", "python/src/x.cpp"), "is not under mlx/"),
    (GOOD.replace("mlx/x.cpp", "python/tests/sub/x.py"), "is not under mlx/"),
    (GOOD.replace("a/mlx/x.cpp\n+++", "a/mlx/../setup.py\n+++"), "is not under mlx/"),
    (GOOD.replace("@@ -1,2 +1,2 @@", "@@ -1,3 +1,2 @@"), "header says"),
    (GOOD.replace("@@ -1,2 +1,2 @@", "@@ one @@"), "malformed hunk header"),
    (GOOD.replace("-b\n", "?b\n"), "header says"),
    (GOOD.rstrip("\n"), "newline"),
    ("just some text\n", "not part of a unified diff"),
    (GOOD.replace("+++ b/mlx/x.cpp\n", ""), "'---' without '+++'"),
])
def test_a_malformed_diff_is_rejected(text, says):
    assert diff_problems(GOOD) == ([], ["mlx/x.cpp"])   # the control itself is fine
    problems, _ = diff_problems(text)
    assert any(says in p for p in problems), problems


def test_a_fixed_finding_outside_the_series_is_rejected(series, tmp_path):
    listed = series[0].split()
    defects = register.load()
    fixed = next(d for d in defects if d.status == "fixed")
    assert register_problems([fixed], [n for n in listed if n != fixed.patch], PATCH) != []
    assert register_problems([fixed], listed, tmp_path) != []   # its test is not there


@pytest.mark.parametrize("source, says", [
    ("import mlx.core as mx\nimport mlx_tests\nclass T(mlx_tests.MLXTestCase):\n"
     "    def test_a(self):\n        self.assertEqual(mx.array(1).item(), 1)\n"
     "mlx_tests.MLXTestRunner()\n", None),
    ("import mlx_vjpcheck\nimport mlx_tests\nclass T(mlx_tests.MLXTestCase):\n"
     "    def test_a(self):\n        self.assertEqual(1, 1)\nmlx_tests.MLXTestRunner()\n", "imports mlx_vjpcheck"),
    ("import numpy as np\nimport mlx.core as mx\nimport mlx_tests\nclass T(mlx_tests.MLXTestCase):\n"
     "    def test_a(self):\n        want = np.cumsum([1, 2])\n        self.assertTrue(mx.allclose(f(), want))\n"
     "mlx_tests.MLXTestRunner()\n", "no assertion against a literal"),
    ("import mlx.core as mx\nimport mlx_tests\nclass T(mlx_tests.MLXTestCase):\n"
     "    def test_a(self):\n        want = reference(2)\n        self.assertEqual(f(2), want)\n"
     "mlx_tests.MLXTestRunner()\n", "no assertion against a literal"),
    ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(1, 1)\n",
     "no mlx_tests.MLXTestCase"),
    ("def broken(:\n", "does not compile"),
])
def test_a_regression_test_that_is_not_mlx_style_or_not_literal_is_rejected(source, says):
    problems = regression_test_problems(source, "t.py")
    if says is None:
        assert problems == []
    else:
        assert any(says in p for p in problems), problems
