"""The native suite's server mode (`vjpcheck-native --serve`), its Python client and
the fuzzer's glue, on the suite built against the installed wheel."""
from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess

import pytest

from conftest import ROOT, needs_pinned_mlx
from mlx_vjpcheck.cases import catalog, files
from mlx_vjpcheck.native import fuzz as native_fuzz
from mlx_vjpcheck.native import server as native_server
from mlx_vjpcheck.native import suite as native_suite

BUILD_DIR = ROOT / "native" / "build-test"

pytestmark = pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("c++")),
                                reason="needs cmake and a C++20 compiler (.ci/run installs them)")


@pytest.fixture(scope="module")
def binary():
    pytest.importorskip("mlx.core", reason="the wheel build needs the installed mlx package")
    return native_suite.build_wheel(BUILD_DIR)


@pytest.fixture(scope="module")
def tolerances(tmp_path_factory):
    return native_server.write_tolerances(tmp_path_factory.mktemp("srv") / "tol.json")


@pytest.fixture
def server(binary, tolerances):
    with native_server.Server(binary, tolerances) as srv:
        yield srv


def _one(name):
    return next(s for s in catalog.catalog() if s.name == name)


def test_a_passing_and_a_failing_case(server):
    ok = server.run(_one("gmm/report_example/joint/unsorted").to_dict())
    assert ok["record"]["status"] == "pass" and ok["vjp_error"] is None
    bad = server.run(_one("gmm/report_example/joint/sorted").to_dict())
    failed = {c["name"] for c in bad["record"]["checks"] if not c["passed"]}
    assert bad["record"]["status"] == "fail" and "grad:a" in failed
    assert server.starts == 1 and server.ops == ["gather_mm", "gather_qmm"]


def test_server_and_batch_mode_agree_on_the_reference_checks(binary, server, tmp_path):
    chosen = [s for s in catalog.catalog() if s.op in ("gather_mm", "gather_qmm")
              and s.objective == "vjp"][:40]
    path = native_suite.write_input(chosen, tmp_path / "in.json")
    batch = {r["scenario"]: r for r in native_suite.run_binary(binary, path).records}
    for s in chosen:
        served = server.run(s.to_dict())["record"]
        assert served["error"] == batch[s.name]["error"], s.name
        if served["error"]:
            continue
        want = {c["name"]: c["passed"] for c in batch[s.name]["checks"] if c["kind"] == "reference"}
        got = {c["name"]: c["passed"] for c in served["checks"] if c["kind"] == "reference"}
        assert got == want, s.name


def test_exact_zero_checks_for_float32(server):
    rec = server.run(_one("gmm/left_omit/unique/unsorted").to_dict())["record"]
    zeros = [c for c in rec["checks"] if c["kind"] == "exact_zero"]
    assert zeros and all(c["passed"] for c in zeros) and rec["status"] == "pass"


def test_unsupported_op_is_skipped_with_a_reason(server):
    s = dataclasses.replace(_one("gmm/report_example/joint/unsorted"), op="no_such_op")
    msg = server.run(s.to_dict())
    assert "skip" in msg and "not implemented by the native suite" in msg["skip"]["reason"]


@needs_pinned_mlx()
def test_a_rejected_forward_is_invalid_not_a_finding(server):
    """MLX's CPU gather_mm kernel rejects float16 in the forward: not a gradient defect."""
    s = _one("gmm/right_repeat/unsorted")
    half = dataclasses.replace(s, operands={k: dataclasses.replace(t, dtype="float16")
                                            for k, t in s.operands.items()})
    msg = server.run(half.to_dict())
    assert "invalid" in msg and "forward raised" in msg["invalid"]


def test_a_case_the_reference_rejects_is_skipped(server):
    base = _one("gmm/right_repeat/unsorted")
    s = dataclasses.replace(base, operands=dict(base.operands, rhs_indices=dataclasses.replace(
        base.operands["rhs_indices"], values=(0, 0, 9))))
    msg = server.run(s.to_dict())
    assert "skip" in msg and "reference rejects" in msg["skip"]["reason"]


def test_a_malformed_request_is_a_harness_error_and_the_server_goes_on(binary, tolerances):
    p = subprocess.run([str(binary), "--serve", str(tolerances)], input="not json\n{}\n",
                       capture_output=True, text=True, timeout=60)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert lines[0]["ready"] is True and p.returncode == 0
    assert [("harness_error" in m) for m in lines[1:]] == [True, True]


def test_negative_control_impossible_tolerance_fails_every_check(binary, tmp_path):
    tol = tmp_path / "tol.json"
    tol.write_text(json.dumps({"tolerances": {"reference": {"float32": [-1.0, 0.0]},
                                              "fd": {"float32": [-1.0, 0.0]}}}))
    with native_server.Server(binary, tol) as srv:
        rec = srv.run(_one("gmm/matmul_control/unsorted").to_dict())["record"]
    assert rec["status"] == "fail" and not any(c["passed"] for c in rec["checks"] if c["kind"] == "reference")


def test_bad_usage_exits_2(binary):
    for argv in ([], ["--serve"], ["--bench-moe", "1", "2"], ["--bench-moe", "a", "1", "1", "1", "1"]):
        p = subprocess.run([str(binary), *argv], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and p.stdout == "", argv


def test_fast_path_probe_sees_the_segmented_matmul(binary):
    """The gate's check that a patch keeps the MoE fast path: on the pinned wheel (and on
    pristine main) a right-sorted, non-broadcast VJP goes through SegmentedMM."""
    p = subprocess.run([str(binary), "--fast-path"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"fast_path": {"gather_mm": True, "gather_qmm": True}}


def test_bench_moe_reports_timings(binary):
    p = subprocess.run([str(binary), "--bench-moe", "16", "8", "8", "4", "2"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["bench"] == "moe" and len(out["seconds"]) == 2 and all(s > 0 for s in out["seconds"])


# --- the fuzzer's glue: outcomes and signatures -------------------------------------------

@needs_pinned_mlx()
def test_every_corpus_signature_reads_the_same_through_the_server(server):
    """The native executor names each regression the way the Python fuzzer named it on
    the wheel: crashes, exceptions, wrong values and shapes alike."""
    from mlx_vjpcheck import oracles
    run_case = native_fuzz.Executor(server)
    # The native suite runs its ops' first-order checks: the corpus entries it can name.
    native = [e for e in files.regressions() if e.scenario.op in native_fuzz.native_ops()
              and e.meta["signature"].split("__")[2] in oracles.FIRST_ORDER]
    assert len(native) >= 20
    for e in native:
        out = run_case(e.scenario)
        assert out.signature == e.meta["signature"], e.scenario.name
    assert server.starts >= 2          # the crash regression killed one server
    assert run_case.crashes >= 1


@needs_pinned_mlx()
def test_a_short_native_campaign_finds_the_report_class(binary, tolerances):
    result = native_fuzz.campaign(binary, tolerances, seed=0, budget_s=60, max_cases=150)
    sigs = {f.signature for f in result["findings"]}
    assert any(s.startswith("gather_mm__") and "wrong-value__lhs-sorted" in s for s in sigs), sigs
    info = result["campaign"]
    assert info["executor"] == "native server" and info["stats"]["cases"] > 0
    assert info["dtypes"]["gather_mm"] == ["float32"]        # the CPU kernel runs float32 only


def test_outcome_of_a_crash_and_of_an_exception():
    from mlx_vjpcheck.fuzz import engine
    s = _one("gmm/report_example/joint/sorted")
    ex = native_fuzz.Executor(server=None)
    crash = ex.outcome(s, {"crashed": {"stage": "vjp", "checks": [], "how": "exit 0", "detail": "x"}})
    assert crash.status == "fail" and crash.signature.endswith("crash-exit-0__any")
    early = ex.outcome(s, {"crashed": {"stage": "forward", "checks": [], "how": "signal SIGSEGV",
                                      "detail": ""}})
    assert early.status == "invalid"
    rec = {"scenario": s.name, "device": "cpu", "checks": [], "error": "std::invalid_argument: [flatten] x",
           "fd": {}, "status": "error", "seconds": 0.0}
    err = ex.outcome(s, {"record": rec, "vjp_error": {"type": "ValueError", "message": "[flatten] x"}})
    assert err.signature == "gather_mm__vjp__vjp_exception__exception-ValueError-flatten__any"
    assert isinstance(err, engine.Outcome)
    skipped = ex.outcome(s, {"skip": {"scenario": s.name, "reason": "why"}})
    assert skipped.status == "invalid" and ex.skipped["why"] == 1
