"""The package's structure: stages as folders, no import cycles, a layered graph,
op records that reject inconsistencies, and a validation path that needs numpy only."""
from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from mlx_vjpcheck import ops
from mlx_vjpcheck.core.opinfo import KnownDefect, OpInfo, OpInfoError

PKG = ROOT / "harness"
# Which stage may import which (besides itself). The command line may import anything.
LAYERS = {
    "core": set(),
    "ops": {"core"},
    "oracles": {"core"},
    "cases": {"core", "ops", "oracles"},
    # judging reads the ops of the first patch from their records (gate_verdict.TARGET)
    "judging": {"core", "ops", "oracles"},
    "evidence": {"core"},
    "running": {"core", "ops", "cases", "oracles", "judging", "evidence"},
    "versions": {"core", "evidence"},
    # validation re-derives a sweep's findings with the sweep's own pure functions (sweep/derive.py,
    # sweep/known.py); test_validation_reaches_no_mlx_stage_through_the_sweep keeps that path pure
    "validation": {"core", "ops", "cases", "oracles", "judging", "evidence", "versions", "sweep"},
    "fuzz": {"core", "ops", "cases", "oracles", "judging", "evidence", "running"},
    "native": {"core", "ops", "cases", "oracles", "judging", "evidence", "running", "fuzz"},
    "gate": {"core", "ops", "cases", "oracles", "judging", "evidence", "running", "fuzz", "native"},
    "pytest_plugin": {"core", "cases", "evidence", "running"},
    "gradcheck": {"core"},
    "sweep": {"core", "ops", "cases", "judging", "evidence", "running", "gradcheck"},
}


def _modules() -> dict:
    out = {}
    for f in PKG.rglob("*.py"):
        parts = f.relative_to(PKG).with_suffix("").parts
        name = ".".join(p for p in parts if p != "__init__")
        out[name] = f
    return out


def _imports(name: str, path: Path, known: set) -> set:
    """Package-internal modules a module imports anywhere in its body (lazy ones too)."""
    pkg_parts = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = pkg_parts[:len(pkg_parts) - (node.level - 1)] if node.level > 1 else pkg_parts
            target = ".".join(base + ([node.module] if node.module else [])).strip(".")
            for alias in node.names:
                cand = f"{target}.{alias.name}".strip(".")
                out.add(cand if cand in known else target)
    return out - {""}


def _graph() -> dict:
    mods = _modules()
    return {m: _imports(m, f, set(mods)) for m, f in mods.items()}


def _cycles(graph: dict) -> list:
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                found.append(sorted(comp))
    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_between_modules():
    assert _cycles(_graph()) == []


def test_stages_only_import_the_stages_below_them():
    bad = []
    for mod, deps in _graph().items():
        stage = mod.split(".")[0]
        if stage not in LAYERS:
            continue
        for dep in deps:
            other = dep.split(".")[0]
            if other != stage and other not in LAYERS[stage] and other != "":
                bad.append(f"{mod} -> {dep}")
    assert bad == []


def test_validation_reaches_no_mlx_stage_through_the_sweep():
    """validation may import the sweep's pure modules (derive, known, the API table), never
    a stage it may not import itself by a detour: every module it reaches, however
    indirectly, is of a stage it may import."""
    graph, allowed = _graph(), LAYERS["validation"] | {"validation"}
    seen, todo = set(), [m for m in graph if m.split(".")[0] == "validation"]
    while todo:
        m = todo.pop()
        if m in seen or m not in graph:
            continue
        seen.add(m)
        todo += list(graph[m])
    assert sorted(m for m in seen if m.split(".")[0] not in allowed) == []
    assert {m for m in seen if m.startswith("sweep")} <= {"sweep", "sweep.derive", "sweep.known", "sweep.api",
                                                          "sweep.corners", "sweep.values"}


def test_the_package_top_level_is_stages_not_a_flat_list_of_modules():
    top = sorted(p.name for p in PKG.iterdir() if p.suffix == ".py")
    assert top == ["__init__.py", "__main__.py"]
    stages = sorted(p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert set(LAYERS) | {"cli"} == set(stages)


def test_the_gate_is_one_stage_sharing_one_verdict_module_with_the_validator():
    """harness/gate/ holds the gate; its rules are judging/gate_verdict.py, which the
    validator's re-derivation imports too (no second copy of the rules anywhere)."""
    graph = _graph()
    assert not (PKG / "native" / "gate.py").exists()
    for user in ("gate.compare", "gate.mlxtests", "validation.native"):
        assert "judging.gate_verdict" in graph[user], user
    assert not {"judging.gate_rules", "judging.mlx_test_rules"} & set(graph)
    assert not [m for m in graph if m.startswith("native.") and m.split(".")[1] in
                ("gate", "replay", "pyfuzz", "mlxtests", "bindings", "variants", "headers", "patch")]


def test_every_subpackage_is_shipped():
    tomllib = pytest.importorskip("tomllib")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = {p for p in cfg["packages"] if not p.startswith("mlx_vjpcheck._data")}
    folders = {"mlx_vjpcheck" + "".join("." + part for part in d.relative_to(PKG).parts)
               for d in [PKG, *PKG.rglob("*")] if d.is_dir() and (d / "__init__.py").exists()}
    assert listed == folders
    assert cfg["package-dir"]["mlx_vjpcheck"] == "harness"


def test_registry_is_the_explicit_module_list():
    mods = [m for m in ops.MODULES]
    assert len(mods) == len(set(mods))
    files = {p.stem for p in (PKG / "ops").glob("*.py") if p.stem != "__init__"}
    assert files == set(mods), "every op module is listed once, and only op modules live in ops/"
    for name, info in ops.registry().items():
        assert isinstance(info, OpInfo) and info.name == name


def test_no_op_module_imports_another_op_module():
    """Shared code lives in ops/_support/; an op module imports core and _support only."""
    graph = _graph()
    op_modules = {f"ops.{m}" for m in ops.MODULES}
    bad = [f"{m} -> {d}" for m in op_modules for d in graph[m] if d in op_modules or d == "ops"]
    assert bad == []
    support = {m for m in graph if m.startswith("ops._support")}
    assert not [f"{m} -> {d}" for m in support for d in graph[m] if d in op_modules]


def test_every_call_file_is_standalone_and_every_op_names_one():
    """ops/repro/*.py import mlx, numpy and the standard library only (reproducers embed
    them as text) and have no `from __future__` (an embedded one would be a syntax error)."""
    from mlx_vjpcheck.cases import reproducer
    for f in sorted((PKG / "ops" / "repro").glob("*.py")):
        text = f.read_text(encoding="utf-8")
        assert "from __future__" not in text, f.name
        if f.stem != "__init__":
            assert not reproducer._foreign_imports(ast.parse(text)), f.name
    for name, info in ops.registry().items():
        assert info.mlx_call.startswith(".ops.repro."), name
        assert (PKG / "ops" / "repro" / (info.mlx_call.split(":")[0].rsplit(".", 1)[1] + ".py")).is_file(), name


def _base():
    return ops.get("gather_mm")


@pytest.mark.parametrize("change, field", [
    (dict(name="Bad Name"), "name"),
    (dict(differentiable=("a", "zz")), "differentiable"),
    (dict(differentiable=()), "differentiable"),
    (dict(integer_operands=("a",)), "integer_operands"),
    (dict(optional_operands=("zz",)), "optional_operands"),
    (dict(optional_operands=("a",)), "optional_operands"),
    (dict(variants=(("sorted", "x"),)), "variants"),
    (dict(known_defects={"t": 1}), "known_defects"),
    (dict(known_defects=(KnownDefect("t", when=1),)), "known_defects"),
    (dict(known_defects=(KnownDefect("t"), KnownDefect("t", fatal=True))), "known_defects"),
    (dict(known_defects=(KnownDefect("t", revealed_by=2),)), "known_defects"),
    (dict(first_patch="yes"), "first_patch"),
    (dict(reference=None), "reference"),
    (dict(mlx_call="not a path"), "mlx_call"),
    (dict(strategy="not callable"), "strategy"),
    (dict(rule=""), "rule"),
    (dict(fuzz_weight=0), "fuzz_weight"),
])
def test_an_inconsistent_record_is_rejected_naming_op_and_field(change, field):
    with pytest.raises(OpInfoError) as e:
        dataclasses.replace(_base(), **change)
    assert f"field {field}" in str(e.value)
    assert repr(change.get("name", "gather_mm")) in str(e.value)


def test_every_registered_op_is_complete():
    for name, info in ops.registry().items():
        assert info.scenarios is not None and info.catalog_scenarios(), name
        if info.has_vjp:
            assert info.strategy is not None and info.rule, name
        assert all(s.op == name for s in info.catalog_scenarios())


VALIDATE_WITHOUT = r'''
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


def test_validation_path_needs_numpy_only(tmp_path):
    from helpers import evidence_fixtures as fx
    run_dir = fx.run_dir(tmp_path / "run")
    p = subprocess.run([sys.executable, "-c", VALIDATE_WITHOUT, str(ROOT), str(run_dir)],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "checks passed" in p.stdout


def test_no_tracked_file_is_over_1_mb():
    """Nothing binary or generated over 1 MB is tracked (the layout's rule)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    big = [n for n in names.decode().split("\0") if n and (ROOT / n).is_file()
           and (ROOT / n).stat().st_size > 1 << 20]
    assert big == []


def test_tests_mirror_the_stages_and_plant_wrong_vjps_one_way():
    """Test files live in their stage's folder (cross-cutting ones at tests/), with unique
    names; only tests/helpers/wrong_vjp.py wraps an op's call in mx.custom_function."""
    tests = ROOT / "tests"
    stages = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert stages <= set(LAYERS) | {"cli", "helpers"}, stages - set(LAYERS)
    files = [p for p in tests.rglob("test_*.py")]
    names = [p.name for p in files]
    assert len(names) == len(set(names)), "test file names must be unique across folders"
    needle = "custom_function" + "(inner"   # spelled apart so that this file does not match
    planting = sorted(str(p.relative_to(tests)) for p in tests.rglob("*.py")
                      if needle in p.read_text(encoding="utf-8"))
    assert planting == ["helpers/wrong_vjp.py"], planting
