"""Honest evidence made by the real commands (needs MLX): it follows the published
schemas, validates and replays; a campaign bounded by cases replays by seed; Ctrl-C
always reaches a campaign and the evidence says so; what replay must catch, it catches."""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import helpers.evidence_fixtures as fx
from conftest import ROOT, run_cli
from mlx_vjpcheck.core import jsonio
from mlx_vjpcheck.evidence import strict
from mlx_vjpcheck.validation import evidence, schema

pytest.importorskip("mlx.core")

CLI = [sys.executable, "-m", "mlx_vjpcheck.cli"]


def cli(*argv, timeout=600):
    p = subprocess.run([*CLI, *map(str, argv)], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """A campaign that ends on its case budget (so it can be run again by seed), over ops
    whose defects MLX repeats exactly (the gather pair's reads past a buffer would make
    the search itself vary: replay then says the campaign is nondeterministic)."""
    out = tmp_path_factory.mktemp("honest") / "fuzz"
    rc, _, err = cli("fuzz", "--time", 600, "--max-examples", 120, "--seed", 3, "--ops",
                     "at_set,partition,hadamard_transform", "--db", "none", "--no-progress", "--out", out)
    assert rc in (0, 1), err
    return out


def _schemas_hold(root: Path) -> None:
    """Every JSON file the command wrote follows its schema, by our checker and by the
    jsonschema package (when installed)."""
    try:
        import jsonschema
        import referencing
    except ImportError:
        jsonschema = None
    if jsonschema is not None:
        docs = {p.name: schema.document(p.name) for p in schema.SCHEMA_DIR.glob("*.schema.json")}
        registry = referencing.Registry().with_resources(
            [(d["$id"], referencing.Resource.from_contents(d)) for d in docs.values()])
    for p in sorted(root.rglob("*.json")):
        kind = evidence.kind_of(p.relative_to(root).as_posix())
        assert kind is not None, p
        assert schema.problem(kind.schema, strict.loads(p.read_bytes())) is None, p
        if jsonschema is not None:
            v = jsonschema.Draft202012Validator(docs[kind.schema], registry=registry)
            assert [e.message for e in v.iter_errors(json.loads(p.read_text()))][:1] == [], p


def test_a_campaign_follows_the_schemas_validates_and_replays(campaign):
    _schemas_hold(campaign)
    rc, out, _ = cli("validate", campaign, "--expect", "defects")
    assert rc == 0, out
    assert "absence of other findings: reproducible by seed" in out, out
    camp = json.loads((campaign / "campaign.json").read_text())
    assert camp["ended_by"] == "cases" and camp["replayable"]["by_seed"] and not camp["interrupted"]
    rc, out, err = cli("replay", campaign)
    assert rc == 0 and "trust: reproduced" in out, out + err


def test_every_finding_says_which_of_its_values_came_back_the_same(campaign):
    for p in (campaign / "findings").glob("*.json"):
        rec = json.loads(p.read_text())["record"]
        assert rec["checks"] and all(isinstance(c.get("deterministic"), bool) for c in rec["checks"]), p
        if rec.get("error") is not None:
            assert isinstance(rec.get("error_deterministic"), bool), p


def test_a_campaign_bounded_by_cases_replays_by_seed_and_catches_a_removed_finding(campaign, tmp_path):
    found = len(json.loads((campaign / "findings.json").read_text()))
    assert found >= 2, "a finding can be removed and one kept"
    rc, out, err = cli("replay", campaign, "--campaign")
    assert rc == 0 and f"the same {found} signatures from seeds [3]" in out, out + err
    forged = Path(shutil.copytree(campaign, tmp_path / "forged"))
    idx = json.loads((forged / "findings.json").read_text())
    gone = idx.pop()
    for f in gone["files"].values():
        (forged / f).unlink()
    (forged / "findings.json").write_text(json.dumps(idx))
    camp = json.loads((forged / "campaign.json").read_text())
    camp["findings"] = [f for f in camp["findings"] if f["signature"] != gone["signature"]]
    (forged / "campaign.json").write_text(json.dumps(camp))
    fx.rewrite_manifest(forged)
    assert cli("validate", forged)[0] == 0   # consistent: no offline check sees an absence
    rc, out, err = cli("replay", forged, "--campaign")
    assert rc == 1 and "1 found by every run but not recorded" in out and "NOT reproduced" in out, out + err


def _interrupt(argv, after_s: float, tmp_path):
    p = subprocess.Popen([*CLI, *map(str, argv)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=ROOT)
    time.sleep(after_s)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    return p.returncode, time.monotonic() - t0, out, err


@pytest.mark.parametrize("shards", [1, 2])
def test_ctrl_c_always_reaches_the_campaign(tmp_path, shards):
    out = tmp_path / "fz"
    rc, took, _, err = _interrupt(["fuzz", "--time", 300, "--seed", 5, "--db", "none", "--no-progress",
                                   "--shards", shards, "--ops", "gather_mm,gather_qmm", "--out", out], 12, tmp_path)
    assert rc == 130 and took < 60, (rc, took, err)
    camp = json.loads((out / "campaign.json").read_text())
    assert camp["interrupted"] is True and camp["ended_by"] == "interrupt"
    assert not camp["replayable"]["by_seed"]
    rc, text, _ = cli("validate", out)
    assert rc == 0 and "interrupted" in text, text


@pytest.fixture(scope="module")
def honest_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run"
    # gather_mm's scenarios: passes, wrong values, VJPs that raise, and reads past a buffer
    # whose values change from process to process
    p = run_cli("run", "--device", "cpu", "--filter", "gmm/*", "--out", out)
    assert p.returncode == 1, p.stderr
    return out


def _edit(d: Path, fn) -> None:
    from mlx_vjpcheck.evidence import results
    data = jsonio.loads((d / "results.json").read_text())
    fn(data)
    data["summary"] = results.summary(data["records"])
    (d / "results.json").write_text(jsonio.dumps(data, indent=1, sort_keys=True))
    (d / "environment.json").write_text(jsonio.dumps(data["environment"], indent=1, sort_keys=True))
    fx.rewrite_manifest(d)


def test_an_edited_error_text_does_not_replay(honest_run, tmp_path):
    d = Path(shutil.copytree(honest_run, tmp_path / "forged"))

    def forge(data):
        rec = next(r for r in data["records"] if r["status"] == "error")
        rec["error"] = "ValueError: [gather_mm] a harmless looking message"
    _edit(d, forge)
    rc, out, _ = cli("validate", d)
    assert rc == 0, out   # consistent: only MLX can tell
    rc, out, err = cli("replay", d)
    assert rc == 1 and "a harmless looking message" in out and "NOT reproduced" in out, out + err


def _shift(rec: dict, name: str, by: float) -> None:
    """Move one check's observed values, and every check that recorded the same values
    (fd:, compile:), each recomputed by its own rule: what a careful forger does."""
    from mlx_vjpcheck.core import checks
    old = next(c for c in rec["checks"] if c["name"] == name)["observed"]
    for c in rec["checks"]:
        if c["observed"] == old and c.get("expected") is not None:
            obs = checks.shaped(c["observed"], c["observed_shape"]) + by
            c.update(checks.compare(c["name"], obs, checks.shaped(c["expected"], c["expected_shape"]),
                                    c["atol"], c["rtol"], kind=c["kind"], acc=c.get("accumulation")))


def test_a_failing_value_edited_within_the_rules_does_not_replay(honest_run, tmp_path):
    """A failing reference check whose observed values are moved, everything recomputed
    around it: consistent, but MLX gives the recorded values, not these."""
    d = Path(shutil.copytree(honest_run, tmp_path / "forged"))
    data = jsonio.loads((d / "results.json").read_text())
    rec, name = next((r, c["name"]) for r in data["records"] for c in r["checks"]
                     if r["status"] == "fail" and not c["passed"] and c["name"].startswith("grad:")
                     and c.get("deterministic", True) and "report_example" in r["scenario"])

    def forge(data):
        _shift(next(r for r in data["records"] if r["scenario"] == rec["scenario"]), name, 1.0)
    _edit(d, forge)
    rc, out, _ = cli("validate", d)
    assert rc == 0, out
    rc, out, err = cli("replay", d)
    assert rc == 1 and f"{name}: fails again, but with other values" in out, out + err


def test_another_mlx_version_is_not_reproduced_here_unless_allowed(honest_run, tmp_path):
    d = Path(shutil.copytree(honest_run, tmp_path / "drift"))

    def forge(data):
        data["environment"]["mlx"] = "0.26.2"
        data["environment"]["packages"] = {k: "0.26.2" for k in data["environment"]["packages"]}
    _edit(d, forge)
    assert cli("validate", d)[0] == 0
    rc, out, err = cli("replay", d)
    assert rc == 1 and "not reproduced here" in (out + err) and "0.26.2" in (out + err), out + err
    rc, out, err = cli("replay", d, "--allow-drift")
    assert rc == 0 and "drift (allowed)" in (out + err), out + err


def test_a_run_follows_the_schemas_and_validates(honest_run):
    _schemas_hold(honest_run)
    rc, out, _ = cli("validate", honest_run, "--expect", "defects")
    assert rc == 0 and "bound: the catalog under filter 'gmm/*'" in out, out


def test_a_run_replays_three_times(honest_run):
    for _ in range(3):
        rc, out, err = cli("replay", honest_run)
        assert rc == 0, out + err
