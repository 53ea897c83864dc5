"""`mlx-vjpcheck versions` without the network: a fake index and installer whose
"releases" are tiny environments holding a fake `mlx` distribution, and fake
probes that decide by that version. The real pip listing is parsed from
canned output; one optional test asks the real index."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlx_vjpcheck.cli import main as cli
from mlx_vjpcheck.evidence import manifest
from mlx_vjpcheck.versions import matrix as V

# A fake probe per behaviour: present from 0.3.0 on; cannot test on 0.1.0
# then present from 0.2.0; aborts (a crash) on 0.2.0 and is absent otherwise.
PROBE_A = """import sys, mlx
if sys.argv[1:] != ['--device', 'cpu']:
    sys.exit(3)   # every probe is told the device
v = tuple(int(x) for x in mlx.__version__.split('.'))
print('mlx', mlx.__version__)
if v >= (0, 3, 0):
    print('VERDICT: defect present'); sys.exit(1)
print('VERDICT: defect absent'); sys.exit(0)
"""
PROBE_B = """import sys, mlx
if mlx.__version__ == '0.1.0':
    print('VERDICT: cannot test (no such op)'); sys.exit(125)
print('VERDICT: defect present'); sys.exit(1)
"""
PROBE_CRASH = """import os, sys, mlx
if mlx.__version__ == '0.2.0':
    os.abort()
print('VERDICT: defect absent'); sys.exit(0)
"""


class FakeProvider:
    """Index: fixed listings (or an error). Install: a dir whose bin/python puts
    a fake mlx of that version first on the path."""

    installer = "fake"

    def __init__(self, listings, broken=(), wrong=(), unreachable=False):
        self.listings, self.broken, self.wrong = listings, set(broken), set(wrong)
        self.unreachable = unreachable
        self.installed = []

    def packages(self):
        return tuple(self.listings)

    def list_versions(self, package):
        if self.unreachable:
            raise V.InstallError(f"pip index versions {package}: ERROR: network unreachable")
        return list(self.listings[package])

    def install(self, release, env_dir, log):
        self.installed.append(release.version)
        if release.version in self.broken:
            raise V.InstallError(f"ERROR: No matching distribution found for {release.spec}")
        version = "0.0.1" if release.version in self.wrong else release.version
        site = Path(env_dir) / "site"
        (site / "mlx").mkdir(parents=True)
        (site / "mlx" / "__init__.py").write_text(f"__version__ = {version!r}\n")
        dist = site / f"mlx-{version}.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: mlx\nVersion: {version}\n")
        py = Path(env_dir) / "bin" / "python"
        py.parent.mkdir(parents=True)
        py.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} \"$@\"\n")
        py.chmod(0o755)
        log.write(f"fake install {release.spec}\n")
        return py


@pytest.fixture
def fake_probes(tmp_path, monkeypatch):
    d = tmp_path / "probes"
    d.mkdir()
    for name, text in (("probe_a.py", PROBE_A), ("probe_b.py", PROBE_B)):
        (d / name).write_text(text)
    monkeypatch.setattr(V, "DEFAULT_PROBES", ("probe_a.py", "probe_b.py"))
    monkeypatch.setattr(V, "default_probe_dir", lambda: d)
    return d


def run_versions(monkeypatch, provider, *argv):
    monkeypatch.setattr(V, "PipProvider", lambda: provider)
    return cli.main(["versions", *map(str, argv)])


LISTINGS = {"mlx-cpu": ["0.4.0", "0.3.0"], "mlx": ["0.4.0", "0.3.0", "0.2.0", "0.1.0"]}


def verify_manifest(out: Path):
    listed = manifest.parse((out / manifest.NAME).read_text())
    assert sorted(p for _, p in listed) == manifest.files(out)
    for digest, rel in listed:
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest


# ------------------------------------------------------------------ pure logic

def test_version_order():
    vs = ["0.10.0", "0.9.1", "0.26.5", "0.26.3", "0.30.0rc1", "0.30.0", "0.2"]
    assert sorted(vs, key=V.version_key) == ["0.2", "0.9.1", "0.10.0", "0.26.3", "0.26.5",
                                              "0.30.0rc1", "0.30.0"]
    with pytest.raises(ValueError):
        V.version_key("latest")


def test_parse_pip_index_output():
    text = ("mlx-cpu (0.32.4)\nAvailable versions: 0.32.4, 0.32.3, 0.26.5\n"
            "  INSTALLED: 0.32.4\n  LATEST:    0.32.4\n")
    assert V.parse_pip_index(text) == ["0.32.4", "0.32.3", "0.26.5"]
    assert V.parse_pip_index("ERROR: No matching distribution found for mlx-cpu\n") == []


def test_cpu_package_wins_where_both_list_a_release():
    rel = V.releases_for_platform({"mlx-cpu": ["0.26.5"], "mlx": ["0.26.5", "0.26.3"]})
    assert [(r.version, r.spec) for r in rel] == [("0.26.3", "mlx==0.26.3"),
                                                   ("0.26.5", "mlx[cpu]==0.26.5")]


def test_select_range_and_unknown_versions():
    rel = V.releases_for_platform(LISTINGS)
    chosen, notes = V.select(rel, "0.2.0", "0.3.0")
    assert [r.version for r in chosen] == ["0.2.0", "0.3.0"]
    assert notes == []
    chosen, notes = V.select(rel, "0.1.5", None)
    assert [r.version for r in chosen] == ["0.2.0", "0.3.0", "0.4.0"]
    assert notes == ["--from 0.1.5 is not a release offered here; used as a bound only"]
    chosen, notes = V.select(rel, only=["0.3.0", "9.9.9"])
    assert [r.version for r in chosen] == ["0.3.0"]
    assert notes == ["mlx 9.9.9: not offered by the package index for this platform; skipped"]


def rows_from(cells: dict):
    """{version: status or None (install failed)} -> rows with one probe 'p'."""
    rows = []
    for v, status in cells.items():
        row = V.Row(V.Release(v, "mlx", f"mlx=={v}"))
        if status is None:
            row.install = {"status": "failed", "error": "x"}
        else:
            row.install = {"status": "ok"}
            row.results["p"] = {"status": status}
        rows.append(row)
    return rows


def test_first_affected_after_a_clean_release():
    fa = V.first_affected(rows_from({"0.3.0": V.PRESENT, "0.1.0": V.ABSENT, "0.2.0": V.ABSENT}), "p")
    assert (fa["first"], fa["last_unaffected"], fa["untested_before"]) == ("0.3.0", "0.2.0", [])
    assert fa["text"] == "first affected 0.3.0 (last unaffected 0.2.0)"


def test_first_affected_names_the_untested_gap():
    fa = V.first_affected(rows_from({"0.1.0": V.ABSENT, "0.2.0": None, "0.3.0": V.PRESENT,
                                     "0.4.0": V.ABSENT}), "p")
    assert fa["first"] == "0.3.0" and fa["untested_before"] == ["0.2.0"]
    assert fa["absent_again"] == "0.4.0"
    assert "could not test 0.2.0 in between" in fa["text"] and "absent again in 0.4.0" in fa["text"]


def test_first_affected_when_nothing_before_was_testable():
    fa = V.first_affected(rows_from({"0.1.0": V.CANNOT, "0.2.0": V.PRESENT}), "p")
    assert fa["first"] == "0.2.0" and fa["last_unaffected"] is None
    assert fa["text"].endswith("could not test 0.1.0 before it, so it may be older")
    fa = V.first_affected(rows_from({"0.2.0": V.PRESENT}), "p")
    assert "the oldest release tested" in fa["text"]


def test_first_affected_none():
    assert V.first_affected(rows_from({"0.1.0": V.ABSENT}), "p")["first"] is None
    fa = V.first_affected(rows_from({"0.1.0": V.CANNOT}), "p")
    assert fa["first"] is None and fa["text"] == "no release could be tested"


def test_exit_code_counts_undecided_cells():
    probe = [V.Probe(Path("p.py"))]
    assert V.exit_code(rows_from({"0.1.0": V.ABSENT, "0.2.0": V.PRESENT}), probe) == 0
    assert V.exit_code(rows_from({"0.1.0": V.ABSENT, "0.2.0": V.CANNOT}), probe) == 1
    assert V.exit_code(rows_from({"0.1.0": V.ABSENT, "0.2.0": None}), probe) == 1


# ---------------------------------------------------- the real provider, offline

def test_pip_provider_parses_and_reports_listing_failures(monkeypatch):
    def fake_run(cmd, **kw):
        if cmd[-1] == "mlx-cpu":
            return subprocess.CompletedProcess(cmd, 0, "mlx-cpu (0.27.1)\n"
                                               "Available versions: 0.27.1, 0.26.5\n", "")
        return subprocess.CompletedProcess(cmd, 1, "", "WARNING: x\nERROR: No matching "
                                           "distribution found for mlx\n")
    monkeypatch.setattr(V.subprocess, "run", fake_run)
    p = V.PipProvider()
    assert p.list_versions("mlx-cpu") == ["0.27.1", "0.26.5"]
    with pytest.raises(V.InstallError, match="ERROR: No matching distribution found for mlx$"):
        p.list_versions("mlx")


# ------------------------------------------------------------- end to end, fake

def test_matrix_end_to_end(tmp_path, monkeypatch, capsys, fake_probes):
    crash = tmp_path / "crash_repro.py"
    crash.write_text(PROBE_CRASH)
    prov = FakeProvider(LISTINGS, broken={"0.4.0"})
    out, cache = tmp_path / "out", tmp_path / "cache"
    rc = run_versions(monkeypatch, prov, "--out", out, "--cache-dir", cache, "--probes", crash)
    err = capsys.readouterr().err
    assert rc == 1      # 0.4.0 would not install, 0.1.0 cannot test one probe
    assert "mlx 0.4.0: install failed (mlx[cpu]==0.4.0): ERROR: No matching distribution" in err
    doc = json.loads((out / "versions.json").read_text())
    got = {r["version"]: {p: c["status"] for p, c in r["probes"].items()} for r in doc["releases"]}
    assert got == {
        "0.1.0": {"probe_a": "absent", "probe_b": "cannot test", "crash_repro": "absent"},
        "0.2.0": {"probe_a": "absent", "probe_b": "present", "crash_repro": "cannot test"},
        "0.3.0": {"probe_a": "present", "probe_b": "present", "crash_repro": "absent"},
        "0.4.0": {"probe_a": "cannot test", "probe_b": "cannot test", "crash_repro": "cannot test"},
    }
    r020 = doc["releases"][1]
    assert r020["probes"]["crash_repro"]["verdict"].startswith("killed by SIGABRT")
    assert r020["probes"]["probe_b"]["exit_code"] == 1
    assert doc["releases"][2]["spec"] == "mlx[cpu]==0.3.0"
    assert doc["first_affected"]["probe_a"]["first"] == "0.3.0"
    assert doc["first_affected"]["probe_b"]["first"] == "0.2.0"
    assert doc["first_affected"]["crash_repro"]["first"] is None
    assert (out / r020["probes"]["probe_b"]["stdout"]).read_text().strip() == "VERDICT: defect present"
    assert (out / "probes" / "crash_repro.py").read_text() == PROBE_CRASH
    assert (out / "environment.json").is_file()
    verify_manifest(out)

    # Warm: the three good envs are reused, only the broken release is retried.
    prov2 = FakeProvider(LISTINGS, broken={"0.4.0"})
    assert run_versions(monkeypatch, prov2, "--out", out, "--replace", "--cache-dir", cache) == 1
    assert prov2.installed == ["0.4.0"]
    doc2 = json.loads((out / "versions.json").read_text())
    assert all(r["install"]["cached"] for r in doc2["releases"][:3])


def test_half_built_env_is_rebuilt(tmp_path, monkeypatch, fake_probes):
    cache = tmp_path / "cache"
    rel = V.Release("0.3.0", "mlx-cpu", "mlx[cpu]==0.3.0")
    stale = V.env_dir(cache, rel)
    (stale / "bin").mkdir(parents=True)   # an interrupted install: no ready marker
    prov = FakeProvider(LISTINGS)
    assert run_versions(monkeypatch, prov, "--only", "0.3.0", "--out", tmp_path / "o",
                        "--cache-dir", cache) == 0
    assert prov.installed == ["0.3.0"]
    assert (stale / V.READY).is_file()


def test_wrong_version_installed_is_an_install_failure(tmp_path, monkeypatch, capsys, fake_probes):
    prov = FakeProvider(LISTINGS, wrong={"0.2.0"})
    rc = run_versions(monkeypatch, prov, "--only", "0.2.0", "0.3.0", "--out", tmp_path / "o",
                      "--cache-dir", tmp_path / "c")
    assert rc == 1
    assert "installed mlx 0.0.1, expected 0.2.0" in capsys.readouterr().err
    assert not (V.env_dir(tmp_path / "c", V.Release("0.2.0", "mlx", "")) / V.READY).exists()


def test_unreachable_index_falls_back_to_cached_envs(tmp_path, monkeypatch, capsys, fake_probes):
    cache = tmp_path / "cache"
    assert run_versions(monkeypatch, FakeProvider(LISTINGS), "--only", "0.3.0",
                        "--out", tmp_path / "o1", "--cache-dir", cache) == 0
    capsys.readouterr()
    offline = FakeProvider(LISTINGS, unreachable=True)
    assert run_versions(monkeypatch, offline, "--out", tmp_path / "o2", "--cache-dir", cache) == 0
    err = capsys.readouterr().err
    assert "cannot list releases: pip index versions mlx-cpu: ERROR: network unreachable" in err
    assert "using the 1 releases already in the cache" in err
    doc = json.loads((tmp_path / "o2" / "versions.json").read_text())
    assert [r["version"] for r in doc["releases"]] == ["0.3.0"] and offline.installed == []


def test_nothing_can_run_exits_2_with_one_line(tmp_path, monkeypatch, capsys, fake_probes):
    out = tmp_path / "o"
    rc = run_versions(monkeypatch, FakeProvider(LISTINGS, unreachable=True), "--out", out,
                      "--cache-dir", tmp_path / "empty")
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and not out.exists()
    assert err[-1] == ("mlx-vjpcheck: no package index reachable and no cached environment "
                       "to fall back on")
    assert run_versions(monkeypatch, FakeProvider(LISTINGS), "--only", "9.9.9", "--out", out,
                        "--cache-dir", tmp_path / "c") == 2
    assert "no MLX release to test" in capsys.readouterr().err
    assert run_versions(monkeypatch, FakeProvider(LISTINGS), "--from", "latest", "--out", out) == 2
    assert "--from 'latest' is not a version number" in capsys.readouterr().err
    assert run_versions(monkeypatch, FakeProvider(LISTINGS), "--probes", tmp_path / "nope.py",
                        "--out", out) == 2
    assert "probe script not found" in capsys.readouterr().err


def test_every_install_failing_exits_2_but_keeps_the_evidence(tmp_path, monkeypatch, fake_probes):
    prov = FakeProvider(LISTINGS, broken={"0.3.0", "0.4.0"})
    out = tmp_path / "o"
    assert run_versions(monkeypatch, prov, "--from", "0.3.0", "--out", out,
                        "--cache-dir", tmp_path / "c") == 2
    doc = json.loads((out / "versions.json").read_text())
    assert doc["summary"]["installed"] == 0
    verify_manifest(out)


@pytest.mark.skipif(os.environ.get("MLX_VJPCHECK_NETWORK_TESTS") != "1",
                    reason="asks the real package index; set MLX_VJPCHECK_NETWORK_TESTS=1")
def test_real_index_lists_mlx_cpu_releases():
    found = V.PipProvider().list_versions("mlx-cpu")
    assert "0.26.5" in found and "0.32.4" in found


def test_a_probe_that_crashes_in_python_cannot_test_and_the_validator_agrees(tmp_path, monkeypatch, capsys,
                                                                           fake_probes):
    """Python exits 1 on a SyntaxError too: without the contract's VERDICT line, exit 1 is
    "cannot test", never "defect present"; the validator re-derives it from the stdout log."""
    from mlx_vjpcheck.evidence import load
    from mlx_vjpcheck.validation import evidence
    broken = tmp_path / "broken_repro.py"
    broken.write_text("import sys\nprint('VERDICT: defect present'\n")   # unclosed paren
    out = tmp_path / "out"
    prov = FakeProvider({"mlx": ["0.3.0"]})
    prov.installer = "uv"   # an installer the schema knows, so the evidence validates
    run_versions(monkeypatch, prov, "--out", out, "--cache-dir", tmp_path / "c",
                 "--probes", broken, "--only", "0.3.0")
    capsys.readouterr()
    doc = json.loads((out / "versions.json").read_text())
    cell = doc["releases"][0]["probes"]["broken_repro"]
    assert (cell["exit_code"], cell["status"]) == (1, "cannot test")
    assert "SyntaxError" in cell["verdict"]
    lines, passed = evidence.check(load.load(out))
    assert passed, lines
    # negative control: the same cell relabelled "present" (and the summary to match) is refused
    cell["status"] = "present"
    doc["summary"]["cells"] = {"present": 2, "absent": 0, "cannot test": 0}
    doc["first_affected"]["broken_repro"] = {"first": "0.3.0", "last_unaffected": None}
    (out / "versions.json").write_text(json.dumps(doc))
    (out / manifest.NAME).write_text(manifest.render(out))
    lines, passed = evidence.check(load.load(out))
    assert not passed
    assert any("broken_repro" in line and "gives 'cannot test'" in line for line in lines), lines
