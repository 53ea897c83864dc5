"""Which released MLX versions carry each defect.

For every release the package index offers for this platform: an isolated
environment (cached, so a second run only re-runs the probes), that release
installed, every probe run in it. A probe's exit code is its verdict:
0 defect absent, 1 present, 125 cannot test (the `git bisect run` contract).

Everything that touches the network or installs lives behind a provider
object (`PipProvider`), so the bookkeeping here is testable offline.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..core.exits import exit_text

SCHEMA = "mlx-vjpcheck/versions/1"
PRESENT, ABSENT, CANNOT = "present", "absent", "cannot test"
EXIT_STATUS = {0: ABSENT, 1: PRESENT, 125: CANNOT}
DEFAULT_PROBES = ("probe.py", "probe_quantized_and_loss.py", "probe_broadcast_tail.py")
# The defect each shipped probe decides; any other script is named by its file stem.
DEFECT_NAMES = {
    "probe": "repeated-left-indices",
    "probe_quantized_and_loss": "quantized-and-loss",
    "probe_broadcast_tail": "backing-tail",
}
READY = ".vjpcheck-ready"
CACHE_ENV = "MLX_VJPCHECK_CACHE"


class VersionsError(RuntimeError):
    """Nothing can run (exit 2)."""


# ----------------------------------------------------------------- versions

def version_key(v: str) -> tuple:
    """Release order: numeric parts, and a pre-release sorts before its release."""
    m = re.match(r"(\d+(?:\.\d+)*)(.*)$", v.strip())
    if not m:
        raise ValueError(f"not a version: {v!r}")
    nums = tuple(int(x) for x in m.group(1).split("."))
    nums = nums + (0,) * (4 - len(nums))
    return nums + ((0, m.group(2)) if m.group(2) else (1, ""))


def in_range(v: str, lo: str | None, hi: str | None) -> bool:
    k = version_key(v)
    return (lo is None or k >= version_key(lo)) and (hi is None or k <= version_key(hi))


@dataclass(frozen=True)
class Release:
    version: str
    package: str          # the distribution whose listing offered it (mlx-cpu / mlx)
    spec: str             # what gets installed: mlx[cpu]==V or mlx==V


def releases_for_platform(listings: dict) -> list:
    """Merge per-package listings into one release list, oldest first.

    On Linux the CPU backend ships as `mlx-cpu` (installed through the `cpu`
    extra) from 0.26.5 on; older releases carried it inside plain `mlx`, so a
    release listed for both is installed the mlx-cpu way.
    """
    out = {}
    for v in listings.get("mlx", ()):
        out[v] = Release(v, "mlx", f"mlx=={v}")
    for v in listings.get("mlx-cpu", ()):
        out[v] = Release(v, "mlx-cpu", f"mlx[cpu]=={v}")
    return sorted(out.values(), key=lambda r: version_key(r.version))


def parse_pip_index(text: str) -> list:
    """Versions from `pip index versions` output ("Available versions: a, b")."""
    for line in text.splitlines():
        if line.startswith("Available versions:"):
            return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
    return []


def select(releases: list, lo=None, hi=None, only=None) -> tuple:
    """(chosen releases, notes): --only names that the index lacks become notes."""
    notes = []
    if only:
        have = {r.version: r for r in releases}
        for v in only:
            if v not in have:
                notes.append(f"mlx {v}: not offered by the package index for this platform; skipped")
        releases = [have[v] for v in only if v in have]
    offered = {r.version for r in releases}
    for flag, bound in (("--from", lo), ("--to", hi)):
        if bound and bound not in offered and releases:
            notes.append(f"{flag} {bound} is not a release offered here; used as a bound only")
    chosen = [r for r in releases if in_range(r.version, lo, hi)]
    return sorted(chosen, key=lambda r: version_key(r.version)), notes


# ----------------------------------------------------------------- provider

class InstallError(RuntimeError):
    pass


def _tail(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    errs = [ln for ln in lines if ln.lower().startswith(("error", "×", "x "))]
    return ((errs or lines or ["(no output)"])[-1])[:300]


class PipProvider:
    """Real index and installer: `pip index versions`, uv when present else venv + pip."""

    def __init__(self, python: str | None = None, timeout: float = 900):
        self.python = python or sys.executable
        self.timeout = timeout
        self.uv = shutil.which("uv")

    @property
    def installer(self) -> str:
        return "uv" if self.uv else "venv+pip"

    def packages(self) -> tuple:
        return ("mlx",) if platform.system() == "Darwin" else ("mlx-cpu", "mlx")

    def list_versions(self, package: str) -> list:
        """Versions with a wheel for this interpreter and platform (pip filters by tag)."""
        try:
            p = subprocess.run([self.python, "-m", "pip", "index", "versions", package],
                               capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            raise InstallError(f"pip index versions {package}: timed out") from None
        found = parse_pip_index(p.stdout)
        if p.returncode != 0 or not found:
            raise InstallError(f"pip index versions {package}: {_tail(p.stderr or p.stdout)}")
        return found

    def install(self, release: Release, env_dir: Path, log) -> Path:
        py = env_dir / "bin" / "python"
        if self.uv:
            cmds = [[self.uv, "venv", "--quiet", "--python", self.python, str(env_dir)],
                    [self.uv, "pip", "install", "--quiet", "--python", str(py), release.spec, "numpy"]]
        else:
            cmds = [[self.python, "-m", "venv", str(env_dir)],
                    [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                     release.spec, "numpy"]]
        for cmd in cmds:
            log.write("$ " + " ".join(cmd) + "\n")
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout,
                                   env=clean_env())
            except subprocess.TimeoutExpired:
                raise InstallError(f"{cmd[0]} timed out after {self.timeout:.0f} s") from None
            log.write(p.stdout + p.stderr)
            if p.returncode != 0:
                raise InstallError(_tail(p.stderr or p.stdout))
        return py


def clean_env(extra: dict | None = None) -> dict:
    """The caller's environment minus anything that would leak the host's packages."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env["PYTHONNOUSERSITE"] = "1"
    env.update(extra or {})
    return env


# ------------------------------------------------------------------- cache

def cache_root(explicit=None) -> Path:
    from ..core import resources
    return Path(explicit) if explicit else resources.cache_root()


def env_dir(root: Path, release: Release) -> Path:
    # An environment belongs to one interpreter: key it by Python version and machine too.
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-{platform.machine()}"
    return Path(root) / "envs" / f"{release.package}-{release.version}-{tag}"


def installed_version(py: Path) -> str | None:
    """The mlx distribution version inside an env (metadata only: importing may crash)."""
    code = "from importlib.metadata import version; print(version('mlx'))"
    try:
        p = subprocess.run([str(py), "-c", code], capture_output=True, text=True, timeout=60,
                           env=clean_env())
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (p.stdout.strip() or None) if p.returncode == 0 else None


def ensure_env(provider, release: Release, root: Path, log) -> tuple:
    """(python, cached?) for a ready env; a half-built one is removed and rebuilt."""
    target = env_dir(root, release)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(str(target) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # two runs must not build the same env at once
        marker = target / READY
        if marker.is_file():
            py = Path(json.loads(marker.read_text())["python"])
            if py.exists():
                log.write(f"cached environment {target}\n")
                return py, True
        if target.exists():
            shutil.rmtree(target)
        py = provider.install(release, target, log)
        got = installed_version(py)
        if got != release.version:
            shutil.rmtree(target, ignore_errors=True)
            raise InstallError(f"installed mlx {got or '(none)'}, expected {release.version}")
        # Written last: its presence is what makes the env count as complete.
        marker.write_text(json.dumps({"spec": release.spec, "package": release.package,
                                      "python": str(py), "mlx": got}))
        return py, False


def cached_releases(root: Path) -> list:
    """Releases with a complete env in the cache (the offline fallback)."""
    out = []
    for marker in sorted((Path(root) / "envs").glob(f"*/{READY}")):
        try:
            info = json.loads(marker.read_text())
        except (OSError, ValueError):
            continue
        r = Release(info.get("mlx", ""), info.get("package", ""), info.get("spec", ""))
        # Only envs built for this interpreter count.
        if r.version and marker.parent == env_dir(root, r):
            out.append(r)
    return sorted(out, key=lambda r: version_key(r.version))


# ------------------------------------------------------------------ probes

@dataclass(frozen=True)
class Probe:
    path: Path
    builtin: bool = False

    @property
    def id(self) -> str:
        return self.path.stem

    @property
    def defect(self) -> str:
        return DEFECT_NAMES.get(self.id, self.id) if self.builtin else self.id


def default_probe_dir() -> Path:
    from ..core import resources
    return resources.probes_dir()


def probes(extra=(), probe_dir=None) -> list:
    d = Path(probe_dir) if probe_dir else default_probe_dir()
    out = [Probe((d / n).resolve(), builtin=True) for n in DEFAULT_PROBES]
    out += [Probe(Path(p).resolve()) for p in extra]
    missing = [str(p.path) for p in out if not p.path.is_file()]
    if missing:
        raise VersionsError(f"probe script not found: {missing[0]}")
    ids = [p.id for p in out]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup:
        raise VersionsError(f"two probes share the name {dup!r}; rename one")
    return out


def verdict_line(stdout: str, stderr: str) -> str:
    lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    tagged = [ln for ln in lines if ln.startswith("VERDICT:")]
    return (tagged or lines or [_tail(stderr)])[-1][:500]


def status_of(rc, stdout: str) -> str:
    """A probe's status from its exit code and output. Python exits 1 on any uncaught
    exception (a SyntaxError, an ImportError of the probe's own), so exit 1 is "present"
    only with the contract's VERDICT line; without it the probe could not test."""
    status = EXIT_STATUS.get(rc, CANNOT)
    if status == PRESENT and not any(ln.strip().startswith("VERDICT: defect present")
                                     for ln in stdout.splitlines()):
        return CANNOT
    return status


def describe_exit(rc: int) -> str:
    return exit_text(rc, "exit", "killed by")


def run_probe(py: Path, probe: Probe, device: str, timeout: float) -> dict:
    # The probe contract (shipped probes and fuzz reproducers alike): --device cpu|gpu,
    # one VERDICT line, exit 0/1/125.
    cmd = [str(py), str(probe.path), "--device", device]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="vjpcheck-probe-") as cwd:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                               env=clean_env({"MLX_VJPCHECK_DEVICE": device}))
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = None, _text(e.stdout), _text(e.stderr)
    status = status_of(rc, out)
    verdict = verdict_line(out, err)
    if status != EXIT_STATUS.get(rc, CANNOT):
        verdict = f"exit 1 without a 'VERDICT: defect present' line: {_tail(err) or verdict}"
    if rc is None:
        verdict = f"timed out after {timeout:.0f} s"
    elif rc not in EXIT_STATUS:
        verdict = f"{describe_exit(rc)}: {verdict}"
    return {"status": status, "exit_code": rc, "verdict": verdict,
            "seconds": round(time.perf_counter() - t0, 3), "stdout": out, "stderr": err}


def _text(b) -> str:
    return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")


# ------------------------------------------------------------------ matrix

@dataclass
class Row:
    release: Release
    install: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)   # probe id -> run_probe dict
    install_log: str = ""


def run_release(provider, release, probe_list, root, device, timeout) -> Row:
    row = Row(release)
    log = _Log()
    t0 = time.perf_counter()
    try:
        py, cached = ensure_env(provider, release, root, log)
        row.install = {"status": "ok", "cached": cached}
    except (InstallError, OSError) as e:
        row.install = {"status": "failed", "cached": False, "error": str(e)}
    row.install["seconds"] = round(time.perf_counter() - t0, 3)
    row.install_log = log.text()
    if row.install["status"] == "ok":
        for p in probe_list:
            row.results[p.id] = run_probe(py, p, device, timeout)
    return row


class _Log:
    def __init__(self):
        self.parts = []

    def write(self, s: str):
        self.parts.append(s)

    def text(self) -> str:
        return "".join(self.parts)


def run_matrix(provider, releases, probe_list, root, device="cpu", timeout=300,
               jobs=1, on_row=None) -> list:
    """Every release x probe; releases in parallel (each is subprocess-bound)."""
    def one(r):
        row = run_release(provider, r, probe_list, root, device, timeout)
        if on_row:
            on_row(row)
        return row
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = list(pool.map(one, releases))
    return sorted(rows, key=lambda row: version_key(row.release.version))


def cell(row: Row, probe_id: str) -> str:
    if row.install.get("status") != "ok":
        return CANNOT
    return row.results[probe_id]["status"]


def first_affected(rows: list, probe_id: str) -> dict:
    """The first release, ascending, where the probe finds the defect, with the
    facts that qualify it: last clean release before it, untestable ones before
    it (the defect might be older), and a later release where it is gone."""
    ordered = sorted(rows, key=lambda r: version_key(r.release.version))
    cells = [(r.release.version, cell(r, probe_id)) for r in ordered]
    first = next((i for i, (_, c) in enumerate(cells) if c == PRESENT), None)
    if first is None:
        tested = [v for v, c in cells if c == ABSENT]
        text = ("absent in every tested release" if tested
                else "no release could be tested")
        return {"first": None, "last_unaffected": None, "untested_before": [],
                "absent_again": None, "text": text}
    before = cells[:first]
    clean = [v for v, c in before if c == ABSENT]
    untested = [v for v, c in before if c == CANNOT]
    # Untested releases after the last clean one leave the true start open.
    open_gap = [v for v in untested if not clean or version_key(v) > version_key(clean[-1])]
    again = next((v for v, c in cells[first + 1:] if c == ABSENT), None)
    v = cells[first][0]
    text = f"first affected {v}"
    if clean:
        text += f" (last unaffected {clean[-1]})"
    if not before:
        text += " (the oldest release tested: it may be older)"
    elif not clean:
        text += f"; could not test {', '.join(untested)} before it, so it may be older"
    elif open_gap:
        text += f"; could not test {', '.join(open_gap)} in between, so it may have appeared there"
    if again:
        text += f"; absent again in {again}"
    return {"first": v, "last_unaffected": clean[-1] if clean else None,
            "untested_before": untested, "absent_again": again, "text": text}


def exit_code(rows: list, probe_list: list) -> int:
    """0 every cell decided; 1 some release or probe could not be tested."""
    decided = all(cell(r, p.id) in (PRESENT, ABSENT) for r in rows for p in probe_list)
    return 0 if rows and decided else 1


# --------------------------------------------------------------- artifacts

def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def log_paths(row: Row, probe_id: str) -> dict:
    base = f"logs/{row.release.version}/{probe_id}"
    return {"stdout": f"{base}.stdout", "stderr": f"{base}.stderr"}


def document(rows, probe_list, meta: dict) -> dict:
    """versions.json: every cell with exit code, verdict line and its log files."""
    releases = []
    for row in rows:
        entry = {"version": row.release.version, "package": row.release.package,
                 "spec": row.release.spec, "install": dict(row.install),
                 "install_log": f"logs/{row.release.version}/install.log", "probes": {}}
        for p in probe_list:
            if p.id in row.results:
                res = row.results[p.id]
                entry["probes"][p.id] = {k: res[k] for k in ("status", "exit_code", "verdict", "seconds")}
                entry["probes"][p.id].update(log_paths(row, p.id))
            else:
                entry["probes"][p.id] = {"status": CANNOT, "exit_code": None,
                                         "verdict": "not run: install failed"}
        releases.append(entry)
    return {
        "schema": SCHEMA, "kind": "versions", **meta,
        "exit_status": {str(k): v for k, v in EXIT_STATUS.items()},
        "probes": [{"id": p.id, "defect": p.defect, "file": f"probes/{p.path.name}",
                    "sha256": sha256_file(p.path), "builtin": p.builtin} for p in probe_list],
        "releases": releases,
        "first_affected": {p.id: first_affected(rows, p.id) for p in probe_list},
        "summary": {"releases": len(rows),
                    "installed": sum(r.install.get("status") == "ok" for r in rows),
                    "cells": {s: sum(cell(r, p.id) == s for r in rows for p in probe_list)
                              for s in (PRESENT, ABSENT, CANNOT)}},
    }


def write_run(tmp: Path, rows, probe_list, doc: dict, environment: dict) -> None:
    from ..evidence import atomic
    tmp = Path(tmp)
    for p in probe_list:
        atomic.write_bytes(tmp / "probes" / p.path.name, p.path.read_bytes())
    for row in rows:
        atomic.write_text(tmp / "logs" / row.release.version / "install.log", row.install_log)
        for pid, res in row.results.items():
            paths = log_paths(row, pid)
            atomic.write_text(tmp / paths["stdout"], res["stdout"])
            atomic.write_text(tmp / paths["stderr"], res["stderr"])
    atomic.write_json(tmp / "versions.json", doc)
    atomic.write_json(tmp / "environment.json", environment)


def list_releases(provider, notes: list) -> list | None:
    """All releases offered here, or None when no listing could be had (notes say why)."""
    listings = {}
    for pkg in provider.packages():
        try:
            listings[pkg] = provider.list_versions(pkg)
        except InstallError as e:
            notes.append(f"cannot list releases: {e}")
    return releases_for_platform(listings) if listings else None


# ------------------------------------------------------------------- replay

def shipped_probes(probe_dir=None) -> dict:
    """{sha256: path} of every probe this package ships: probes/*.py and the findings
    table's reproducers, probes/findings/*.py. Replay runs only these (found by the
    hash a matrix recorded), never a script that came with the evidence."""
    d = Path(probe_dir) if probe_dir else default_probe_dir()
    found = sorted(d.glob("*.py")) + sorted((d / "findings").glob("*.py"))
    return {sha256_file(p): p.resolve() for p in found if p.is_file()}


def _spec(package: str, version: str) -> str:
    return f"mlx[cpu]=={version}" if package == "mlx-cpu" else f"mlx=={version}"


def replay_plan(doc: dict, only=None, probe_dir=None) -> tuple:
    """(releases, probes, notes) to run a recorded matrix again: the recorded releases
    (those named by --only) installed as recorded, and the recorded probes this package
    ships; notes say what cannot be replayed and why."""
    notes, releases, probe_list = [], [], []
    shipped = shipped_probes(probe_dir)
    for p in doc["probes"]:
        path = shipped.get(p["sha256"])
        if path is None or path.stem != p["id"]:
            notes.append(f"probe {p['id']}: not a probe this package ships (sha256 {p['sha256'][:12]}); "
                         "scripts from evidence are never run")
        else:
            probe_list.append(Probe(path, builtin=bool(p.get("builtin"))))
    recorded = {r["version"]: r for r in doc["releases"]}
    for v in only or []:
        if v not in recorded:
            notes.append(f"--only {v}: the matrix does not record that release")
    for r in doc["releases"]:
        if only and r["version"] not in only:
            continue
        package = r.get("package", "mlx")
        if r.get("spec", _spec(package, r["version"])) != _spec(package, r["version"]):
            notes.append(f"mlx {r['version']}: recorded install spec {r.get('spec')!r} is not this version's")
            continue
        releases.append(Release(r["version"], package, _spec(package, r["version"])))
    return releases, probe_list, notes


def compare_cells(doc: dict, rows: list, probe_list: list) -> list:
    """[(version, probe id, recorded status, status now, reproduced)] per replayed cell."""
    recorded = {r["version"]: r for r in doc["releases"]}
    out = []
    for row in rows:
        rec = recorded[row.release.version]
        for p in probe_list:
            was = CANNOT if rec["install"]["status"] != "ok" else (rec["probes"].get(p.id) or {}).get("status")
            now = cell(row, p.id)
            out.append((row.release.version, p.id, was, now, was == now))
    return out
