"""Adding an op is one new module plus one registration line.

The test does exactly that on a copy of the package: it writes
harness/ops/toy_rows.py (row gather whose custom VJP assigns instead of adding,
the bug class of seed 001), adds "toy_rows" to ops.MODULES, and sees the op
listed by the catalog, failed by the runner where rows repeat and passed where
they do not, found by the fuzzer, and its evidence validated.
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


    def reference(inp, lhs, rhs, params):
        return np.asarray(inp["a"], dtype=np.float64)[np.asarray(lhs, dtype=np.int64)]


    def reference_vjp(inp, g, lhs, rhs, params):
        da = np.zeros(np.shape(inp["a"]))
        for q, i in enumerate(np.asarray(lhs, dtype=np.int64).ravel()):
            da[i] += np.asarray(g)[q]
        return {"a": da}


    def mlx_call(ops, lhs, rhs, sorted_indices, params):
        import mlx.core as mx

        @mx.custom_function
        def f(a):
            return a[lhs]

        @f.vjp
        def f_vjp(primals, cotangent, output):
            da = mx.zeros_like(primals)  # one primal: MLX passes the array itself
            da[lhs] = cotangent          # the bug: repeated rows keep one contribution
            return da
        return f(ops["a"])


    def scenarios():
        a = tensor(np.arange(12).reshape(4, 3) % 5 - 2)
        return [Scenario(name="toy/repeat", op="toy_rows", operands={"a": a}, wrt=("a",),
                         lhs_indices=index_tensor([0, 0, 2])),
                Scenario(name="toy/unique", op="toy_rows", operands={"a": a}, wrt=("a",),
                         lhs_indices=index_tensor([3, 0, 2]))]


    def fuzz_case(draw, dtypes=("float32",)):
        V, W = draw(D.irange(1, 4)), draw(D.irange(1, 3))
        idx = D.index_values(draw, (draw(D.irange(1, 4)),), V, False)
        a = D.layout(draw, (), (V, W), draw(D.irange(0, 99)), draw(D.choice(dtypes)))
        return D.finish(Scenario(name="", op="toy_rows", operands={"a": a}, wrt=("a",),
                                 lhs_indices=index_tensor(idx)))


    REPRO = """
    INTEGER_OPERANDS = ()


    def ref_forward(inp, lhs, rhs, params):
        return inp["a"][lhs]


    def ref_vjp(inp, g, lhs, rhs, params):
        da = np.zeros(inp["a"].shape)
        for q, i in enumerate(lhs.ravel().tolist()):
            da[i] = da[i] + g[q]
        return {"a": da}


    def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
        @mx.custom_function
        def f(a):
            return a[lhs]

        @f.vjp
        def f_vjp(primals, cotangent, output):
            da = mx.zeros_like(primals)
            da[lhs] = cotangent
            return da
        return f(ops["a"])
    """

    OPS = (OpInfo(name="toy_rows", operands=("a",), differentiable=("a",), index_arrays=("lhs",),
                  reference=reference, reference_vjp=reference_vjp, mlx_call=".ops.toy_rows:mlx_call",
                  scenarios=scenarios, strategy=fuzz_case, repro_source=REPRO),)
''')


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """A copy of the package with the toy op added: one new file, one new line."""
    src = tmp_path_factory.mktemp("src")
    shutil.copytree(ROOT / "harness", src / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "validate_artifacts.py", src)
    (src / "harness" / "ops" / "toy_rows.py").write_text(TOY)
    init = src / "harness" / "ops" / "__init__.py"
    text = init.read_text()
    before = text.count("\n")
    init.write_text(text.replace('    "gather_family",\n', '    "gather_family",\n    "toy_rows",\n'))
    assert init.read_text().count("\n") == before + 1
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


def test_runner_fails_it_where_rows_repeat_and_the_evidence_validates(package, tmp_path):
    out = tmp_path / "run"
    p = _cli(package, "run", "--device", "cpu", "--filter", "toy/", "--out", out)
    assert p.returncode == 1, p.stdout + p.stderr
    recs = {r["scenario"]: r for r in json.loads((out / "results.json").read_text())["records"]}
    assert recs["toy/repeat"]["status"] == "fail" and recs["toy/unique"]["status"] == "pass"
    bad = [c["name"] for c in recs["toy/repeat"]["checks"] if not c["passed"]]
    assert bad == ["grad:a"]
    v = _validate(package, out)
    assert v.returncode == 0 and "checks passed" in v.stdout, v.stdout + v.stderr


def test_fuzzer_finds_it_and_the_findings_validate(package, tmp_path):
    out = tmp_path / "fuzz"
    p = _cli(package, "fuzz", "--ops", "toy_rows", "--time", "8", "--seed", "1", "--db", "none",
             "--no-progress", "--out", out)
    assert p.returncode == 1, p.stdout + p.stderr
    found = json.loads((out / "findings.json").read_text())
    assert found and all(f["op"] == "toy_rows" and f["oracle"] == "reference" for f in found)
    v = _validate(package, out)
    assert v.returncode == 0, v.stdout + v.stderr
