"""The fuzzer: strategies make legal scenarios, every oracle rejects a wrong
gradient, a fixed seed gives the same findings, findings validate, and the
reproducers exit 1 on the pinned MLX and 0 where the defect is absent."""
import json
import os
import subprocess
import sys
import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.cases import expected as expect
from mlx_vjpcheck.core import layout
from mlx_vjpcheck.fuzz import engine, findings, targets

from conftest import ROOT  # noqa: E402
PINNED_MLX = "0.32.4"

try:
    import mlx.core as mx
except ImportError:
    mx = None

needs_mlx = pytest.mark.skipif(mx is None, reason="mlx is not installed")
FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def pinned():
    if mx is None:
        pytest.skip("mlx is not installed")
    if mx.__version__ != PINNED_MLX:
        pytest.skip(f"defect classes were established on mlx {PINNED_MLX}, found {mx.__version__}")


def fuzz(out, *args, env=None, check=True):
    cmd = [sys.executable, "-m", "mlx_vjpcheck.cli", "fuzz", "--out", str(out), "--db", "none",
           "--no-progress", "--time", "120", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    if check:
        assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return proc


# --- strategies: pure data, no mlx needed -------------------------------------------

@FAST
@given(targets.cases(["gather_mm", "gather_qmm"], {"gather_qmm": ("float32", "float16")}))
def test_generated_gather_cases_are_legal(s):
    exp = expect.expected(s)          # indices in range, shapes consistent
    assert set(exp) == {"forward"} | {f"grad:{n}" for n in s.wrt}
    one = [t for t in (s.operands.get("lhs_indices"), s.operands.get("rhs_indices")) if t is not None]
    if s.params["sorted_indices"] and len(one) == 1:
        vals = list(one[0].values)
        assert vals == sorted(vals), "the sorted flag needs non-decreasing indices"
    assert s.to_dict() == type(s).from_dict(json.loads(json.dumps(s.to_dict()))).to_dict()


@FAST
@given(targets.cases([op for op in targets.names() if op not in ("gather_mm", "gather_qmm")], {}))
def test_generated_family_cases_are_legal(s):
    exp = expect.expected(s)
    assert "sorted_indices" not in s.params
    if s.op == "put_along_axis" and "v" in s.wrt:   # dv is a derivative only without repeats
        idx = layout.logical(s.operands[s.info.integer_operands[0]], np.int64)
        lines = idx if s.params["axis"] == 1 else idx.T
        assert all(len(set(r)) == len(r) for r in lines.tolist())
    # no NaN anywhere (a reference that cannot decide raises instead); an infinite forward
    # value is data (an exclusive logcumsumexp starts at log 0 = -inf), its gradients are finite
    assert not any(np.any(np.isnan(v)) for v in exp.values())
    assert all(np.all(np.isfinite(v)) for k, v in exp.items() if k != "forward")


def test_merge_keeps_the_smallest_counterexample_per_signature():
    def f(sig, size, t):
        return findings.Finding(sig, "op", "g", "reference", "k", "f", ["reference"], 0, 1, t, t, 0, True,
                                size, size, "now", "cpu", {"name": f"{sig}{size}"}, {})
    merged = findings.merge([[f("a", 5, 1.0), f("b", 3, 2.0)], [f("a", 2, 3.0), f("b", 3, 9.0)]])
    assert [(m.signature, m.size, m.time_minimal_s) for m in merged] == [("b", 3, 2.0), ("a", 2, 3.0)]


# --- oracles: each must reject a deliberately wrong gradient ---------------------------

def report_case(sorted_flag=True):
    s = next(s for s in catalog.catalog() if s.name.startswith("gmm/report_example/joint/"))
    return dataclasses.replace(s, params={"sorted_indices": sorted_flag}, fd_step=None)


def _trial(s, grads, seed=3):
    """What the oracles see after a VJP that gave `grads` (MLX's forward, the reference)."""
    from mlx_vjpcheck.running import execute
    exp = expect.expected(s)
    cot = expect.cotangent(s, exp["forward"])
    obs = dict(exp, **{f"grad:{n}": g for n, g in grads.items()})
    return execute.Trial(s, "fuzz", exp, cot, exp["forward"], grads, obs, seed), execute.Call(s)


@needs_mlx
def test_each_oracle_rejects_a_wrong_gradient():
    from mlx_vjpcheck.running import execute
    from mlx_vjpcheck.oracles import (backward_twice, exact_zero, finite_differences, jvp_consistency,
                                      metamorphic, reference)
    mx.set_default_device(mx.cpu)
    s, unsorted = report_case(sorted_flag=True), report_case(sorted_flag=False)
    cot = expect.cotangent(s, expect.expected(s)["forward"])
    _, right = execute.Call(unsorted).vjp(cot)
    wrong = dict(right, a=right["a"] + np.array([[[0.0]], [[1e-40]]]))   # a denormal in an unused row

    def ok(oracle, case, grads):
        return all(c["passed"] for c in oracle(*_trial(case, grads)))
    assert ok(reference.measure, s, right) and ok(exact_zero.measure, s, right)
    assert ok(reference.measure, s, wrong) and not ok(exact_zero.measure, s, wrong)   # exact zero in the unused row
    assert not ok(reference.measure, s, dict(right, b=right["b"] * 2))
    assert ok(metamorphic.measure, s, right)
    assert not ok(metamorphic.measure, s, dict(right, a=right["a"][::-1]))
    assert metamorphic.measure(*_trial(unsorted, right)) == []   # already the equivalent call
    assert ok(finite_differences.measure, unsorted, right)
    assert not ok(finite_differences.measure, unsorted, dict(right, a=right["a"] + 1))
    assert ok(backward_twice.measure, unsorted, right)
    assert not ok(backward_twice.measure, unsorted, dict(right, b=right["b"] + 1))
    assert jvp_consistency.measure(*_trial(unsorted, right)) == []   # GatherMM has no JVP: nothing to compare


@needs_mlx
def test_report_example_is_a_confirmed_finding_sorted_only():
    pinned()
    mx.set_default_device(mx.cpu)
    bad = engine.run_case(report_case(True), "cpu")
    assert bad.confirmed and bad.signature == "gather_mm__grad-a__reference__wrong-value__left_repeat"
    assert {"reference", "metamorphic", "finite_differences"} <= {f["oracle"] for f in bad.failures}
    assert engine.run_case(report_case(False), "cpu").status == "pass"


# --- campaigns end to end --------------------------------------------------------------

@pytest.fixture(scope="module")
def campaign_dir(tmp_path_factory):
    if mx is None:
        pytest.skip("mlx is not installed")
    out = tmp_path_factory.mktemp("fuzz") / "out"
    # The strategy now also draws the layouts users hit (expand_dims, rank-3 transposes), so
    # the report's classes need a larger budget than the 300 cases they took before.
    proc = fuzz(out, "--ops", "gather_mm", "--max-examples", "600", "--seed", "0")
    return out, proc


def sigs(out):
    return [e["signature"] for e in json.loads((Path(out) / "findings.json").read_text())]


def test_campaign_rediscovers_left_and_tail_classes_small(campaign_dir):
    pinned()
    out, proc = campaign_dir
    assert proc.returncode == 1
    entries = {e["signature"]: e for e in json.loads((out / "findings.json").read_text())}
    left = entries["gather_mm__grad-b__reference__wrong-value__lhs-sorted"]
    tail = entries["gather_mm__grad-b__reference__wrong-value__rhs-sorted+bcast-left"]
    # The report's examples, counting every operand's stored elements (index arrays too): 6 and 9.
    assert left["size"] <= 6 and tail["size"] <= 9
    assert len(entries) == len(sigs(out))                     # one finding per signature
    for e in entries.values():
        assert {"op", "gradient", "oracle", "kind", "seed", "found_at", "time_found_s"} <= set(e)
        detail = json.loads((out / e["files"]["record"]).read_text())
        assert detail["scenario"]["name"] == e["scenario_name"] and detail["oracle"] == e["oracle"]
        assert (out / e["files"]["reproducer"]).is_file()


def test_campaign_dir_validates(campaign_dir):
    out, _ = campaign_dir
    proc = subprocess.run([sys.executable, str(ROOT / "validate_artifacts.py"), str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_fixed_seed_gives_the_same_findings(tmp_path):
    if mx is None:
        pytest.skip("mlx is not installed")
    runs = [fuzz(tmp_path / f"r{i}", "--ops", "gather_mm", "--max-examples", "120", "--seed", "5")
            for i in range(2)]
    names = [[e["scenario_name"] for e in json.loads((tmp_path / f"r{i}" / "findings.json").read_text())]
             for i in range(2)]
    assert sigs(tmp_path / "r0") == sigs(tmp_path / "r1") and names[0] == names[1]
    assert runs[0].returncode == runs[1].returncode


def run_repro(path, env=None):
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, env=env)


def test_reproducers_exit_1_on_pinned_mlx(campaign_dir):
    pinned()
    out, _ = campaign_dir
    for sig in ("gather_mm__grad-b__reference__wrong-value__lhs-sorted",
                "gather_mm__grad-b__reference__wrong-value__rhs-sorted+bcast-left"):
        proc = run_repro(out / "findings" / f"{sig}_repro.py")
        lines = proc.stdout.strip().splitlines()
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert lines[-1].startswith("VERDICT: defect present") and sum(ln.startswith("VERDICT:") for ln in lines) == 1
        assert any("float64 rule" in ln and ln.endswith("DIFFERS") for ln in lines)


def crash_scenario():
    """A 2-D transposed left operand, right indices sorted: on mlx 0.32.4 the
    VJP's BLAS call rejects a parameter and the process exits (status 0)."""
    from mlx_vjpcheck.cases import bind
    from mlx_vjpcheck.core.scenario import Scenario, Tensor
    a = Tensor((1.0,) * 8, (2, 4), "float32", ({"op": "transpose", "axes": [1, 0]},))
    b = Tensor((1.0,) * 8, (2, 2, 2), "float32")
    return bind(Scenario(name="fuzz/gather_mm/crash", op="gather_mm", wrt=("b",),
                         operands={"a": a, "b": b, "rhs_indices": Tensor((0, 0, 1), (3,), "uint32")},
                         params={"sorted_indices": True}, family="rhs-sorted+bcast-left"))


def test_a_vjp_that_kills_the_process_is_a_finding_and_its_reproducer_says_so(tmp_path):
    pinned()
    from mlx_vjpcheck.fuzz import pool
    with pool.Worker("cpu") as w:
        out = w.run(crash_scenario())
        again = w.run(report_case(False))          # a fresh worker carries on
    assert out.status == "fail" and out.record["status"] == "crashed"
    assert out.signature == "gather_mm__vjp__vjp_exception__crash-exit-0__any"
    assert again.status == "pass"
    f = findings.Finding.from_outcome(out, seed=0, round=1, time_found_s=0.0, time_minimal_s=0.0,
                                      cases_before=0, shrunk=True, first_size=16, device="cpu")
    script = tmp_path / "crash_repro.py"
    script.write_text(f.reproducer())
    assert "REPRO_CHILD" in script.read_text()   # a crash finding runs MLX in a child process
    proc = run_repro(script)
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_the_dtype_probe_runs_the_forward_alone_and_agrees_with_a_whole_run():
    pinned()
    from mlx_vjpcheck.fuzz import campaign, pool
    with pool.Worker("cpu") as w:
        for dtype in ("float32", "float16"):     # GatherMM's forward takes float32 only on 0.32.4
            s = targets.minimal_case("gather_mm", dtype)
            quick, whole = w.run(s, probe=True), w.run(s)
            assert (quick.status == "invalid") == (whole.status == "invalid") == (dtype == "float16")
            assert quick.oracles == [] and bool(whole.oracles) == (dtype == "float32")   # no oracle ran
        assert campaign.supported_dtypes(w, ["gather_mm"]) == {"gather_mm": ["float32"]}


SORTED_OFF = """
import mlx.core as mx
_mm, _qmm = mx.gather_mm, mx.gather_qmm
def _unsorted(fn):
    def call(*args, **kw):
        kw["sorted_indices"] = False
        return fn(*args, **kw)
    return call
mx.gather_mm, mx.gather_qmm = _unsorted(_mm), _unsorted(_qmm)
"""


def test_reproducer_exits_0_where_the_defect_is_absent(campaign_dir, tmp_path):
    """Simulated fix: every gather call is forced onto the (correct) unsorted path."""
    out, _ = campaign_dir
    (tmp_path / "sitecustomize.py").write_text(SORTED_OFF)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    for sig in ("gather_mm__grad-b__reference__wrong-value__lhs-sorted",
                "gather_mm__grad-b__reference__wrong-value__rhs-sorted+bcast-left"):
        if sig not in sigs(out):
            pytest.skip(f"{sig} not found on this MLX")
        proc = run_repro(out / "findings" / f"{sig}_repro.py", env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.strip().splitlines()[-1].startswith("VERDICT: defect absent")


def test_reproducer_without_mlx_cannot_test(campaign_dir, tmp_path):
    out, _ = campaign_dir
    (tmp_path / "mlx").mkdir()
    (tmp_path / "mlx" / "__init__.py").write_text("raise ImportError('hidden')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    script = next((out / "findings").glob("*_repro.py"))
    assert run_repro(script, env=env).returncode == 125


def test_shards_merge_without_duplicates(tmp_path):
    if mx is None:
        pytest.skip("mlx is not installed")
    proc = fuzz(tmp_path / "s", "--ops", "gather_mm", "--max-examples", "80", "--seed", "0", "--shards", "2")
    camp = json.loads((tmp_path / "s" / "campaign.json").read_text())
    assert camp["shards"] == 2 and camp["seeds"] == [0, 1] and len(camp["shard_stats"]) == 2
    found = sigs(tmp_path / "s")
    assert len(found) == len(set(found)) and (proc.returncode == 1) == bool(found)
    assert (tmp_path / "s" / "MANIFEST.sha256").is_file()


@pytest.mark.parametrize("args", [["--time", "0"], ["--ops", "nope"], ["--shards", "0"], ["--max-examples", "0"]])
def test_bad_usage_exits_2_with_one_line(tmp_path, args):
    proc = fuzz(tmp_path / "o", *args, check=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "o").exists()


def test_unusable_out_dir_exits_2(tmp_path):
    (tmp_path / "o").write_text("a file")
    proc = fuzz(tmp_path / "o", check=False)
    assert proc.returncode == 2 and "not a directory" in proc.stderr


def test_choices_keep_their_types_across_ops():
    """Equal tuples of different types (1, 2) and (1.0, 2.0) are different choices:
    a cache keyed by value alone handed one op's floats to another op's integer
    parameter (rope's dims became floats once softmax had drawn first)."""
    from hypothesis import given, settings
    from mlx_vjpcheck.core import draw as D
    ints, floats = D.choice((1, 2)), D.choice((1.0, 2.0))
    assert ints is not floats

    @settings(max_examples=20, database=None)
    @given(ints, floats)
    def check(i, f):
        assert type(i) is int and type(f) is float
    check()
