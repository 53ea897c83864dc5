"""`mlx-vjpcheck run` end to end: verdicts on the pinned MLX, crash isolation,
a wrong-gradient op that the pipeline must reject, and the bad-input paths."""
import json
import textwrap

import pytest

from conftest import needs_pinned_mlx, run_cli
from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.evidence import results
from mlx_vjpcheck import oracles
from mlx_vjpcheck.oracles import FIRST_ORDER
from mlx_vjpcheck.running import runner
from mlx_vjpcheck.core import scenario as sc

pytest.importorskip("mlx.core")


def _records(out):
    data = results.load(out / "results.json")
    return data, {r["scenario"]: r for r in data["records"]}


def test_run_writes_complete_results(full_run):
    proc, out = full_run
    data, recs = _records(out)
    assert set(recs) == {s.name for s in catalog.catalog()}
    assert (out / "MANIFEST.sha256").exists() and (out / "environment.json").exists()
    assert data["summary"]["total"] == len(recs)
    assert proc.returncode == results.exit_code(data["records"])
    for r in data["records"]:
        assert r["status"] in ("pass", "fail", "error", "crashed")
        assert all({"worst_error", "atol", "rtol", "observed", "expected"} <= set(c) for c in r["checks"])


@needs_pinned_mlx()
def test_pinned_version_fails_exactly_the_defect_scenarios(full_run):
    proc, out = full_run
    _, recs = _records(out)
    assert proc.returncode == 1
    for s in catalog.catalog():
        status = recs[s.name]["status"]
        assert (status != "pass") == s.expects_defect, (s.name, status)
        # the classes only a transform oracle shows (OpInfo.revealed_by) are exactly those
        assert _first_order_fails(recs[s.name]) == s.expects_defect_under(FIRST_ORDER), s.name
        sorted_only = all(s.info.conditional_tags.get(t) == "sorted_indices" for t in s.defect_tags)
        if s.params.get("sorted_indices") is False and sorted_only:
            assert status == "pass", s.name   # the sorted-path classes do not bite the unsorted call


@needs_pinned_mlx()
def test_pinned_version_reproduces_the_report_numbers(full_run):
    _, recs = _records(full_run[1])
    checks = {c["name"]: c for c in recs["gmm/report_example/joint/sorted"]["checks"]}
    assert [v[0][0] for v in checks["grad:a"]["observed"]] == [3.0, 5.0]
    assert [v[0][0] for v in checks["grad:a"]["expected"]] == [8.0, 0.0]
    assert [v[0][0] for v in checks["grad:b"]["observed"]] == [2.0, 7.0]
    tail = {c["name"]: c for c in recs["gmm/backing_tail/neg/sorted"]["checks"]}
    assert [v[0][0] for v in tail["grad:b"]["observed"]] == [2.0, -31.0, 47.0]


PLUGIN = textwrap.dedent('''
    import dataclasses
    import os
    import mlx.core as mx
    import numpy as np
    from mlx_vjpcheck.ops import gather_mm

    def crash(ops, params):
        os.abort()

    def assign_not_add(ops, params):
        # Forward is right; the VJP overwrites repeated rows instead of adding (seed 001).
        lhs = mx.array(ops["lhs_indices"].astype(np.uint32))

        @mx.custom_function
        def f(a, b):
            return mx.gather_mm(a, b, lhs_indices=lhs)
        @f.vjp
        def f_vjp(primals, cotangent, output):
            a, b = primals
            contrib = cotangent @ mx.swapaxes(b, -1, -2)
            da = mx.zeros_like(a)
            da[lhs] = contrib
            return da, mx.zeros_like(b)
        return f(ops["a"], ops["b"])

    base = gather_mm.OPS[0]
    OPS = (dataclasses.replace(base, name="crash_op", mlx_call="vjp_test_plugin:crash", scenarios=None,
                               error_inputs=None),
           dataclasses.replace(base, name="assign_op", mlx_call="vjp_test_plugin:assign_not_add",
                               scenarios=None, error_inputs=None))
''')


def _plugin_scenarios():
    cases = {s.name: s for s in catalog.catalog()}
    base = cases["gmm/report_example/wrt_a/unsorted"]
    import dataclasses
    return [dataclasses.replace(base, name="first", info=None),
            dataclasses.replace(base, name="boom", op="crash_op", info=None),
            dataclasses.replace(base, name="wrong", op="assign_op", info=None),
            dataclasses.replace(base, name="last", info=None)]


def test_crash_is_one_record_and_wrong_gradient_is_rejected(tmp_path, monkeypatch):
    (tmp_path / "vjp_test_plugin.py").write_text(PLUGIN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("MLX_VJPCHECK_PLUGINS", "vjp_test_plugin")
    import sys
    monkeypatch.syspath_prepend(str(tmp_path))
    from mlx_vjpcheck import ops
    monkeypatch.setattr(ops, "_REGISTRY", {})   # rebuilt with the plugin in this process too
    recs = {r["scenario"]: r for r in runner.run_device(_plugin_scenarios(), "cpu")}
    assert [recs[n]["status"] for n in ("first", "boom", "wrong", "last")] == \
        ["pass", "crashed", "fail", "pass"]
    assert "SIGABRT" in recs["boom"]["error"]
    bad = {c["name"] for c in recs["wrong"]["checks"] if not c["passed"]}
    # the wrong da shows in the plain VJP and again under the transforms (compile, ...)
    assert "grad:a" in bad and all(n.split("#")[0].endswith("grad:a") for n in bad), bad


def test_filter_selects_and_writes_atomically(tmp_path):
    out = tmp_path / "r"
    proc = run_cli("run", "--device", "cpu", "--filter", "right_repeat/wrt_a", "--out", out)
    assert proc.returncode == 0, proc.stderr
    data, recs = _records(out)
    assert set(recs) == {"gmm/right_repeat/wrt_a/sorted", "gmm/right_repeat/wrt_a/unsorted"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]   # no temp leftovers


@pytest.mark.parametrize("args, needle", [
    (["--filter", "no-such-scenario"], "no scenario matches"),
    (["--device", "tpu"], "invalid choice"),
])
def test_bad_usage_is_one_line_exit_2(tmp_path, args, needle):
    proc = run_cli("run", "--out", tmp_path / "o", *args)
    assert proc.returncode == 2 and needle in proc.stderr
    assert "Traceback" not in proc.stderr


def test_gpu_request_without_gpu_is_exit_2(tmp_path):
    import mlx.core as mx
    if mx.is_available(mx.gpu):
        pytest.skip("this machine has a GPU backend")
    proc = run_cli("run", "--device", "gpu", "--out", tmp_path / "o")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "not available" in proc.stderr


def test_refuses_foreign_non_empty_out_dir(tmp_path):
    (tmp_path / "keep.txt").write_text("user data")
    proc = run_cli("run", "--filter", "right_identity", "--out", tmp_path)
    assert proc.returncode == 2 and "non-empty" in proc.stderr
    assert (tmp_path / "keep.txt").read_text() == "user data"


def test_out_path_that_is_a_file_is_exit_2(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    proc = run_cli("run", "--filter", "right_identity", "--out", f)
    assert proc.returncode == 2 and "not a directory" in proc.stderr


def test_missing_mlx_is_exit_2(tmp_path, fake_mlx_path):
    proc = run_cli("run", "--out", tmp_path / "o", env={"PYTHONPATH": fake_mlx_path})
    assert proc.returncode == 2 and "mlx is not installed" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_catalog_export_round_trips(tmp_path):
    proc = run_cli("catalog", "--filter", "qmm4/*", "--out", tmp_path / "c.json")
    assert proc.returncode == 0
    got = sc.load_catalog(json.loads((tmp_path / "c.json").read_text()))
    assert got and all(s.op == "gather_qmm" for s in got)


def _first_order_fails(rec: dict) -> bool:
    """The VJP raised or died, or a check of a first-order oracle failed."""
    if rec["status"] in ("error", "crashed"):
        return True
    return any(not c["passed"] and getattr(oracles.of_kind(c.get("kind", "reference")), "name", None)
               in FIRST_ORDER for c in rec["checks"])
