"""What replay executes again follows from the run directory's layout, never from a
label: every file of honest evidence is one its command writes (planned), and a
forger's relabelled kind, stray gate-named file or unknown file refuses the
evidence (validation/replayplan.py). The forgeries are what a text editor and
sha256sum make: a field edited or a file added, the manifest re-hashed."""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from mlx_vjpcheck.validation import replayplan

RUN = {"results.json": {"kind": "run"}, "environment.json": {}, "MANIFEST.sha256": None}
WHEEL = {"results.json": {"kind": "native-wheel"}, "environment.json": {}, "scenarios.json": {},
         "commands.json": [], "logs/run-1.out": None, "MANIFEST.sha256": None}
FUZZ = {"findings.json": [], "campaign.json": {}, "environment.json": {}, "findings/abc.json": {},
        "findings/abc_repro.py": None, "MANIFEST.sha256": None, "SUMMARY.md": None}
SWEEP = {"sweep.json": {}, "environment.json": {}, "MANIFEST.sha256": None}
GRADCHECK = {"gradcheck.json": {}, "environment.json": {}, "MANIFEST.sha256": None}
VERSIONS = {"versions.json": {}, "environment.json": {}, "probes/p.py": None, "logs/0.1.0/install.log": None,
            "MANIFEST.sha256": None}
GATE_NATIVE_ONLY = {"environment.json": {}, "commands.json": [], "comparison.json": {}, "gate.json": {},
                    "results-pristine.json": {"kind": "native-pristine"},
                    "results-patched.json": {"kind": "native-patched"}, "patch.diff": None,
                    "scenarios.json": {}, "logs/compile-x.out": None, "MANIFEST.sha256": None}
GATE_BOTH = {**GATE_NATIVE_ONLY, "results-pristine.json": {"kind": "gate-pristine"},
             "results-patched.json": {"kind": "gate-patched"}, "mlx-tests.json": {},
             "native/results-pristine.json": {"kind": "native-pristine"},
             "native/results-patched.json": {"kind": "native-patched"}, "native/comparison.json": {},
             "native/commands.json": [], "native/logs/run.out": None}
HONEST = {"run": RUN, "native-wheel": WHEEL, "fuzz": FUZZ, "sweep": SWEEP, "gradcheck": GRADCHECK,
          "versions": VERSIONS, "gate": GATE_NATIVE_ONLY}


def _plan(files: dict):
    return replayplan.plan(files, files.get)


@pytest.mark.parametrize("layout", sorted(HONEST))
def test_every_honest_layout_is_planned_whole(layout):
    p = _plan(HONEST[layout])
    assert p.ok and p.layout == layout, p.refused


def test_a_gate_with_both_stages_is_planned_whole():
    p = _plan(GATE_BOTH)
    assert p.ok and p.layout == "gate", p.refused


@pytest.mark.parametrize("extra", ["fuzz-summary.json", "results-pristine.json", "comparison.json",
                                   "replay.json", "handoff.json", "sweep.json", "notes.txt",
                                   "native/results-patched.json", "findings/x.json"])
def test_one_extra_file_refuses_a_run_never_switches_its_path(extra):
    p = _plan({**RUN, extra: {"kind": "native-patched"}})
    assert not p.ok and p.refused, extra
    assert any(extra in why or "kinds of run" in why for why in p.refused), p.refused


@pytest.mark.parametrize("kind", ["gate-pristine", "native-pristine", "fuzz", "sweep", "x", None])
def test_a_results_kind_replay_cannot_execute_is_refused(kind):
    p = _plan({**RUN, "results.json": {"kind": kind}})
    assert not p.ok and any("results of kind" in why for why in p.refused), p.refused


def test_a_native_wheel_label_without_the_suites_files_is_refused():
    p = _plan({**RUN, "results.json": {"kind": "native-wheel"}})
    assert not p.ok and any("scenarios.json" in why for why in p.refused), p.refused


@pytest.mark.parametrize("name,kind", [("results-pristine.json", "run"), ("native/results-patched.json",
                                                                            "gate-patched")])
def test_a_gate_results_file_of_another_kind_is_refused(name, kind):
    p = _plan({**GATE_BOTH, name: {"kind": kind}})
    assert not p.ok and any(name in why for why in p.refused), p.refused


@pytest.mark.parametrize("extra", ["results.json", "sweep.json", "findings.json", "versions.json",
                                   "gradcheck.json", "fuzz-summary.json", "native/sweep.json"])
def test_a_gate_holding_another_runs_file_is_refused(extra):
    p = _plan({**GATE_NATIVE_ONLY, extra: {"kind": "run"}})
    assert not p.ok, extra


def test_a_gate_without_what_rebuilds_it_is_refused():
    for name in ("patch.diff", "scenarios.json", "gate.json", "commands.json"):
        files = dict(GATE_NATIVE_ONLY)
        del files[name]
        p = _plan(files)
        assert not p.ok and any(name in why for why in p.refused), (name, p.refused)


def test_handoffs_and_native_fuzz_runs_are_refused_with_the_reason():
    assert any("handoff" in w for w in _plan({"handoff.json": {}, "MANIFEST.sha256": None}).refused)
    p = _plan({"fuzz-summary.json": {}, "environment.json": {}, "MANIFEST.sha256": None})
    assert not p.ok and any("build_and_test.py --fuzz" in w for w in p.refused)


def test_two_kinds_of_run_in_one_directory_are_refused():
    p = _plan({**RUN, **SWEEP})
    assert not p.ok and any("2 kinds of run" in w for w in p.refused)


# --- the command, on a real run: forged as a forger would ------------------------------------------

@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    out = tmp_path_factory.mktemp("plan") / "run"
    p = run_cli("run", "--device", "cpu", "--filter", "gmm/report_example/wrt_a", "--out", out)
    assert p.returncode == 1, p.stderr
    return out


def _rehash(d: Path) -> None:
    """sha256sum over every file, as a forger re-makes MANIFEST.sha256."""
    lines = []
    for f in sorted(p for p in d.rglob("*") if p.is_file() and p.name != "MANIFEST.sha256"):
        lines.append(f"{hashlib.sha256(f.read_bytes()).hexdigest()}  {f.relative_to(d).as_posix()}\n")
    (d / "MANIFEST.sha256").write_text("".join(lines))


def _replay(path, *extra):
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", "replay", str(path), *extra],
                       capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


@pytest.mark.parametrize("forge", ["kind", "copy-as-pristine"])
def test_forged_runs_are_refused_by_replay(honest, tmp_path, forge):
    d = tmp_path / "forged"
    shutil.copytree(honest, d)
    if forge == "kind":   # sed of "kind": the records would no longer be re-executed
        text = (d / "results.json").read_text()
        (d / "results.json").write_text(text.replace('"kind": "run"', '"kind": "gate-pristine"', 1))
    else:                 # one extra file named like a gate artifact
        shutil.copy(d / "results.json", d / "results-pristine.json")
    _rehash(d)
    rc, out = _replay(d)   # refused: by the validator (exit 2) or by the plan (exit 1), never replayed
    assert rc in (1, 2) and "refused" in out and "trust: reproduced" not in out, out


def test_the_honest_run_replays(honest):
    rc, out = _replay(honest)
    assert rc == 0 and "records: 2 of 2 reproduced" in out, out


def test_gate_evidence_replays_through_build_and_tests_own_command_line(monkeypatch, tmp_path):
    """`mlx-vjpcheck replay GATE --mlx-source --mlx-build` is build_and_test.py --replay: the
    same main, given the same options (it crashed with a TypeError before)."""
    import argparse

    from mlx_vjpcheck.cli import gate as gate_cli
    from mlx_vjpcheck.cli import replay_native
    seen = []
    monkeypatch.setattr(gate_cli, "main", lambda argv: seen.append(argv) or 0)
    args = argparse.Namespace(evidence=str(tmp_path / "gate"), mlx_source="/src", mlx_build="/build",
                              out=str(tmp_path / "out"), replace=True, cache="/cache", jobs=2,
                              allow_drift=True)
    assert replay_native.gate(args, print) == 0
    parsed = gate_cli.parser().parse_args(seen[0])
    assert (parsed.replay, parsed.mlx_source, parsed.mlx_build, parsed.out, parsed.replace, parsed.cache,
            parsed.jobs, parsed.allow_drift) == (args.evidence, "/src", "/build", args.out, True, "/cache", 2, True)
