"""Adding an op is one new module plus one registration line; adding an oracle
is one new module plus one line in harness/oracles/__init__.py's ORACLES.

The test does exactly that on a copy of the package: it writes
harness/ops/toy_rows.py (row gather whose custom VJP assigns instead of adding,
the bug class of seed 001) and adds "toy_rows" to ops.MODULES; it writes
harness/oracles/linearity.py, a toy oracle (the VJP is linear in the
cotangent: J^T(2g) = 2 J^T g: its row, its measuring function, its recheck)
and adds it to oracles.ORACLES (its name in the import line too). Then the op is
listed by the catalog, failed by the runner where rows repeat and passed where
they do not, found by the fuzzer with a reproducer that says so; the toy
oracle's checks are in `run`'s results, and the validator re-checks them (a
forged one is rejected).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

TOY = textwrap.dedent('''
    """toy_rows: Y = A[idx] with a custom VJP that assigns instead of adding."""
    import numpy as np

    from ..core import draw as D
    from ..core.opinfo import OpInfo
    from ..core.scenario import Scenario
    from ..core.tensors import index_tensor, tensor


    def reference(inp, params):
        return np.asarray(inp["a"], dtype=np.float64)[np.asarray(inp["idx"], dtype=np.int64)]


    def reference_vjp(inp, g, params):
        da = np.zeros(np.shape(inp["a"]))
        for q, i in enumerate(np.asarray(inp["idx"], dtype=np.int64).ravel()):
            da[i] += np.asarray(g)[q]
        return {"a": da}


    def mlx_call(operands, params):
        import mlx.core as mx
        idx = mx.array(operands["idx"].astype("uint32"))

        @mx.custom_function
        def f(a):
            return a[idx]

        @f.vjp
        def f_vjp(primals, cotangent, output):
            da = mx.zeros_like(primals)  # one primal: MLX passes the array itself
            da[idx] = cotangent          # the bug: repeated rows keep one contribution
            return da
        return f(operands["a"])


    def scenarios():
        a = tensor(np.arange(12).reshape(4, 3) % 5 - 2)
        return [Scenario(name="toy/repeat", op="toy_rows", operands={"a": a, "idx": index_tensor([0, 0, 2])},
                         wrt=("a",)),
                Scenario(name="toy/unique", op="toy_rows", operands={"a": a, "idx": index_tensor([3, 0, 2])},
                         wrt=("a",))]


    def fuzz_case(draw, dtypes=("float32",)):
        V, W = draw(D.irange(1, 4)), draw(D.irange(1, 3))
        idx = D.index_values(draw, (draw(D.irange(1, 4)),), V, False)
        a = D.layout(draw, (), (V, W), draw(D.irange(0, 99)), draw(D.choice(dtypes)))
        return D.finish(Scenario(name="", op="toy_rows", operands={"a": a, "idx": index_tensor(idx)},
                                 wrt=("a",)))


    OPS = (OpInfo(name="toy_rows", operands=("a", "idx"), differentiable=("a",), integer_operands=("idx",),
                  reference=reference, reference_vjp=reference_vjp, mlx_call=".ops.toy_rows:mlx_call",
                  rule="dA[l] = sum of G_q over q with idx_q = l", scenarios=scenarios, strategy=fuzz_case),)
''')

ORACLE = textwrap.dedent('''
    """linearity: the VJP is linear in the cotangent, J^T (2 g) = 2 J^T g."""
    from ..core import checks
    from . import bridge, recheck
    from .base import Oracle


    def measure(t, call) -> list:
        """J^T (2 g) against 2 J^T g, from a fresh VJP with the doubled cotangent."""
        if not t.grads:
            return []
        _, doubled = bridge.Call(t.s).vjp(2 * t.cotangent)
        return [checks.compare(f"linear:{n}", doubled[n], 2 * t.grads[n], *t.tol(), kind="linearity")
                for n in t.s.wrt]


    ORACLE = Oracle("linearity", "the VJP is linear in the cotangent: J^T(2g) = 2 J^T g", ("linearity",),
                    ("run", "fuzz", "gate", "validator"), measure, recheck.self_consistent, confirms=False)
''')


def _add_line(path, after: str, line: str) -> None:
    """Insert `line` after the line `after`; exactly one line more."""
    text = path.read_text()
    assert text.count(after) == 1, after
    path.write_text(text.replace(after, after + line))


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """A copy of the package with the toy op and the toy oracle added."""
    src = tmp_path_factory.mktemp("src")
    shutil.copytree(ROOT / "harness", src / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "validate_artifacts.py", src)
    (src / "harness" / "ops" / "toy_rows.py").write_text(TOY)
    init = src / "harness" / "ops" / "__init__.py"
    before = init.read_text().count("\n")
    _add_line(init, '    "gather_family",\n', '    "toy_rows",\n')
    assert init.read_text().count("\n") == before + 1
    (src / "harness" / "oracles" / "linearity.py").write_text(ORACLE)
    oracles = src / "harness" / "oracles" / "__init__.py"   # its line goes last in ORACLES
    before = oracles.read_text().count("\n")
    _add_line(oracles, "from . import (", "linearity, ")   # the import names it (on the same line)
    _add_line(oracles, "    jvp_consistency,\n", "    linearity,\n")
    assert oracles.read_text().count("\n") == before + 1
    return src


def _cli(src, *args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(src))
    return subprocess.run([sys.executable, "-m", "harness.cli", *map(str, args)], cwd=src, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _validate(src, path):
    return subprocess.run([sys.executable, str(src / "validate_artifacts.py"), str(path)], cwd=src,
                          capture_output=True, text=True, timeout=120)


def test_catalog_lists_the_new_op(package):
    p = _cli(package, "catalog", "--json", "--filter", "toy/")
    assert p.returncode == 0, p.stderr
    names = [s["name"] for s in json.loads(p.stdout)["scenarios"]]
    assert names == ["toy/repeat", "toy/unique"]


@pytest.fixture(scope="module")
def toy_run(package, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run"
    return _cli(package, "run", "--device", "cpu", "--filter", "toy/", "--out", out), out


def test_runner_fails_it_where_rows_repeat_and_the_evidence_validates(package, toy_run):
    p, out = toy_run
    assert p.returncode == 1, p.stdout + p.stderr
    recs = {r["scenario"]: r for r in json.loads((out / "results.json").read_text())["records"]}
    assert recs["toy/repeat"]["status"] == "fail" and recs["toy/unique"]["status"] == "pass"
    bad = [c["name"] for c in recs["toy/repeat"]["checks"] if not c["passed"]]
    # the plain VJP first; the same wrong rule again under the transforms (compile, vmap)
    assert bad[0] == "grad:a" and all(n.split("#")[0].endswith("grad:a") for n in bad), bad
    v = _validate(package, out)
    assert v.returncode == 0 and "checks passed" in v.stdout, v.stdout + v.stderr


def test_the_new_oracle_reaches_run_and_the_validator_rechecks_it(package, toy_run, tmp_path):
    _, out = toy_run
    recs = json.loads((out / "results.json").read_text())["records"]
    linear = [c for r in recs for c in r["checks"] if c["kind"] == "linearity"]
    assert {c["name"] for c in linear} == {"linear:a"} and len(linear) == 2 and all(c["passed"] for c in linear)
    forged = tmp_path / "forged"
    shutil.copytree(out, forged)
    data = json.loads((forged / "results.json").read_text())
    check = next(c for r in data["records"] for c in r["checks"] if c["kind"] == "linearity")
    check["observed"] = [[v + 1.0 for v in row] for row in check["observed"]]   # passed stays true
    (forged / "results.json").write_text(json.dumps(data))
    from mlx_vjpcheck.evidence import manifest
    (forged / manifest.NAME).write_text(manifest.render(forged))
    v = _validate(package, forged)
    assert v.returncode == 1 and "linear:a" in v.stdout, v.stdout + v.stderr


def test_fuzzer_finds_it_and_the_findings_validate(package, tmp_path):
    out = tmp_path / "fuzz"
    p = _cli(package, "fuzz", "--ops", "toy_rows", "--time", "8", "--seed", "1", "--db", "none",
             "--no-progress", "--out", out)
    assert p.returncode == 1, p.stdout + p.stderr
    found = json.loads((out / "findings.json").read_text())
    assert found and all(f["op"] == "toy_rows" and f["oracle"] == "reference" for f in found)
    v = _validate(package, out)
    assert v.returncode == 0, v.stdout + v.stderr
    script = out / found[0]["files"]["reproducer"]
    repro = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert repro.returncode == 1 and "VERDICT: defect present" in repro.stdout, repro.stdout + repro.stderr
