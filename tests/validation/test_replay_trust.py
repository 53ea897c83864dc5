"""Forgeries made as a forger with a text editor and sha256sum would (a field edited, a
file deleted, the manifest re-hashed) against real run and fuzz evidence: each must be
refused by `validate` or not reproduced by a plain `replay`, and the honest evidence
must replay (the negative controls). Issue 31, items 4 and 5."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli


def _rehash(d: Path) -> None:
    lines = [f"{hashlib.sha256(f.read_bytes()).hexdigest()}  {f.relative_to(d).as_posix()}\n"
             for f in sorted(p for p in d.rglob("*") if p.is_file() and p.name != "MANIFEST.sha256")]
    (d / "MANIFEST.sha256").write_text("".join(lines))


def _sed(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))


def _validate(path) -> tuple:
    p = subprocess.run([sys.executable, str(ROOT / "validate_artifacts.py"), str(path)], capture_output=True,
                       text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


def _replay(path) -> tuple:
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", "replay", str(path)], capture_output=True,
                       text=True, timeout=900)
    return p.returncode, p.stdout + p.stderr


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("trust") / "run"
    p = run_cli("run", "--device", "cpu", "--filter", "gmm/report_example/wrt_b", "--out", out)
    assert p.returncode == 1, p.stderr
    return out


def _env_edit(d: Path, old: str, new: str) -> None:
    """The same edit in results.json's environment and environment.json (kept equal)."""
    for name in ("results.json", "environment.json"):
        _sed(d / name, old, new)


def _recorded(d: Path) -> dict:
    return json.loads((d / "environment.json").read_text())


PROVENANCE = {
    "python": lambda env: (f'"python": "{env["python"]}"', '"python": "3.99.0"'),
    "numpy": lambda env: (f'"numpy": "{env["numpy"]}"', '"numpy": "0.1.0"'),
    "compiler": lambda env: (f'"compiler": {json.dumps(env["compiler"])}', '"compiler": "clang version 3.0"'),
    "mlx_checkout_commit": lambda env: ('"mlx_checkout_commit": null', '"mlx_checkout_commit": "' + "a" * 40 + '"'),
}


@pytest.mark.parametrize("field", sorted(PROVENANCE) + ["machine", "harness commit"])
def test_drifted_provenance_is_not_reproduced_and_named(run, tmp_path, field):
    d = tmp_path / "forged"
    shutil.copytree(run, d)
    env = _recorded(d)
    if field == "machine":   # machine null, and the architecture taken out of the platform string
        _env_edit(d, f'"machine": "{env["machine"]}"', '"machine": null')
        _env_edit(d, f'-{env["machine"]}-', "-")
    elif field == "harness commit":
        commit = json.loads((d / "results.json").read_text())["provenance"]["harness"]["commit"]
        _sed(d / "results.json", f'"commit": {json.dumps(commit)}', '"commit": "' + "b" * 40 + '"')
    else:
        _env_edit(d, *PROVENANCE[field](env))
    _rehash(d)
    rc, out = _validate(d)
    assert rc == 0, out   # consistent: only this machine can say it is not the recording one
    rc, out = _replay(d)
    assert rc == 1 and "trust: NOT reproduced" in out and f"{field.split()[0]}" in out, out


def test_the_honest_run_replays(run):
    rc, out = _replay(run)
    assert rc == 0 and "trust: reproduced" in out, out


# --- fuzz: campaign-level claims by plain replay ---------------------------------------------------

@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("trust") / "fuzz"
    p = run_cli("fuzz", "--ops", "gather_mm", "--max-examples", "40", "--seed", "5", "--db", "none",
                "--device", "cpu", "--out", out, timeout=600)
    assert p.returncode == 1, p.stderr   # gather_mm's sorted-path defects are found
    assert json.loads((out / "campaign.json").read_text())["replayable"]["by_seed"]
    return out


def test_an_honest_campaign_replays_three_times(campaign):
    for _ in range(3):
        rc, out = _replay(campaign)
        assert rc == 0 and "the same" in out and "signatures from seeds [5]" in out, out


def _drop_finding(d: Path) -> str:
    index = json.loads((d / "findings.json").read_text())
    gone = index.pop()
    (d / "findings.json").write_text(json.dumps(index, indent=1, sort_keys=True))
    camp = json.loads((d / "campaign.json").read_text())
    camp["findings"] = [f for f in camp["findings"] if f["signature"] != gone["signature"]]
    (d / "campaign.json").write_text(json.dumps(camp, indent=1, sort_keys=True))
    for f in gone["files"].values():
        (d / f).unlink()
    _rehash(d)
    return gone["signature"]


def test_a_deleted_finding_is_caught_by_plain_replay(campaign, tmp_path):
    d = tmp_path / "forged"
    shutil.copytree(campaign, d)
    _drop_finding(d)
    rc, out = _validate(d)
    assert rc == 0, out   # consistent: no offline check proves an absence
    rc, out = _replay(d)
    assert rc == 1 and "found by every run but not recorded" in out, out


def test_a_finding_with_another_campaigns_seed_is_refused(campaign, tmp_path):
    d = tmp_path / "forged"
    shutil.copytree(campaign, d)
    _sed(d / "findings.json", '"seed": 5', '"seed": 6')
    _rehash(d)
    rc, out = _validate(d)
    assert rc == 1 and "not one of this campaign's" in out, out


# --- sweep: every record, unless asked; a partial replay is not "reproduced" -----------------------

@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("trust") / "sw"
    p = run_cli("sweep", "--functions", "mx.sin", "--jobs", "1", "--out", out)
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def test_a_sweep_replays_whole_and_a_sampled_replay_is_not_reproduced(sweep):
    rc, out = _replay(sweep)
    assert rc == 0 and "trust: reproduced" in out, out
    rc, out = _replay_with(sweep, "--sample", "0")
    assert rc == 1 and "clean passes not executed again (--sample 0)" in out, out


def _replay_with(path, *extra) -> tuple:
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", "replay", str(path), *extra],
                       capture_output=True, text=True, timeout=900)
    return p.returncode, p.stdout + p.stderr


def test_a_gate_recorded_on_another_machine_is_not_rebuilt_as_if_here(tmp_path):
    """build_and_test.py --replay (and so `replay` of gate evidence) holds the recorded
    environment to this machine first: a forged compiler, Python or architecture is named."""
    from mlx_vjpcheck.gate import replay as gate_replay
    from mlx_vjpcheck.running import environment
    honest = environment.record(None, mlx_checkout=tmp_path)
    assert gate_replay._drift(honest, tmp_path) == []
    for key, value in (("compiler", "clang version 3.0"), ("python", "3.99.0"), ("machine", "riscv64")):
        lines = gate_replay._drift(dict(honest, **{key: value}), tmp_path)
        assert any(line.startswith(key) for line in lines), (key, lines)
