"""Replaying a version matrix: the recorded releases, the recorded probes that this
package ships (found by hash; a script from evidence is never run), each cell's
status compared. Offline: the installer is a fake provider."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import helpers.evidence_fixtures as fx
from mlx_vjpcheck.versions import matrix as V


def _doc_for(probe: Path, cells: dict) -> dict:
    releases = [{"version": v, "package": "mlx-cpu", "spec": f"mlx[cpu]=={v}", "install": {"status": "ok"},
                 "probes": {probe.stem: {"status": st, "exit_code": code}}} for v, (code, st) in cells.items()]
    return {"schema": V.SCHEMA, "kind": "versions", "device": "cpu", "exit_status": {},
            "probes": [{"id": probe.stem, "file": f"probes/{probe.name}", "sha256": V.sha256_file(probe)}],
            "releases": releases, "first_affected": {}, "summary": {"releases": len(releases), "cells": {}}}


class FakeProvider:
    """Installs nothing: every release's "python" is this interpreter."""
    installer = "fake"

    def install(self, release, env_dir, log):
        env_dir.mkdir(parents=True, exist_ok=True)
        return Path(sys.executable)


def test_only_shipped_probes_are_replayed(tmp_path):
    shipped = V.default_probe_dir() / "probe.py"
    doc = _doc_for(shipped, {"0.1.0": (1, "present")})
    releases, probes, notes = V.replay_plan(doc)
    assert [p.path for p in probes] == [shipped.resolve()] and not notes
    foreign = tmp_path / "probe.py"
    foreign.write_text("import os; os.system('echo pwned')\n")
    doc = _doc_for(foreign, {"0.1.0": (1, "present")})
    releases, probes, notes = V.replay_plan(doc)
    assert probes == [] and "not a probe this package ships" in notes[0]


def test_findings_reproducers_ship_and_are_found_by_hash():
    found = V.shipped_probes()
    names = {p.name for p in found.values()}
    assert "probe.py" in names
    assert any(p.parent.name == "findings" for p in found.values()), "probes/findings/*.py must ship"


def test_only_named_releases_and_canonical_specs(tmp_path):
    shipped = V.default_probe_dir() / "probe.py"
    doc = _doc_for(shipped, {"0.1.0": (0, "absent"), "0.2.0": (1, "present")})
    releases, _, notes = V.replay_plan(doc, only=["0.2.0", "9.9.9"])
    assert [r.version for r in releases] == ["0.2.0"] and "9.9.9" in notes[0]
    doc["releases"][0]["spec"] = "mlx[cpu]==0.1.0 --index-url http://evil"
    releases, _, notes = V.replay_plan(doc)
    assert [r.version for r in releases] == ["0.2.0"] and "install spec" in notes[0]


def test_cells_are_compared_per_release_and_probe(tmp_path, monkeypatch):
    probe_dir = tmp_path / "probes"
    (probe_dir / "findings").mkdir(parents=True)
    script = probe_dir / "probe.py"
    script.write_text("import sys\nprint('VERDICT: defect present')\nsys.exit(1)\n")
    doc = _doc_for(script, {"0.1.0": (0, "absent"), "0.2.0": (1, "present")})
    releases, probes, notes = V.replay_plan(doc, probe_dir=probe_dir)
    assert not notes
    # every release's environment is this interpreter: the probe says present in both
    monkeypatch.setattr(V, "ensure_env", lambda provider, release, root, log: (Path(sys.executable), True))
    rows = V.run_matrix(FakeProvider(), releases, probes, tmp_path / "cache", timeout=60)
    cells = V.compare_cells(doc, rows, probes)
    assert [(v, was, now, same) for v, _, was, now, same in cells] == [
        ("0.1.0", "absent", "present", False), ("0.2.0", "present", "present", True)]


def test_a_fabricated_matrix_is_consistent_but_replay_runs_its_probes(tmp_path):
    root = fx.versions_dir(tmp_path / "versions")
    doc = json.loads((root / "versions.json").read_text())
    # the fixture's probe is its own script, not one this package ships: replay refuses it
    _, probes, notes = V.replay_plan(doc)
    assert probes == [] and notes
