"""Cross-checks between evidence files that each validate on their own:

* probe outputs against the results they sit beside: a probe saying "defect
  absent" on the MLX version and device of a results file in which a scenario
  of the probe's defect class fails contradicts it (and "present" where every
  such scenario passes);
* native runs against their command records: every crashed record is one
  binary run that exited non-zero, and a clean run exited 0;
* version-matrix cells against their recorded probe logs: the VERDICT line in
  the log says what the cell's exit code says;
* an environment record against itself: the MLX version is the version of the
  installed MLX package, the packages exist on the platform recorded (mlx-cpu
  and CUDA wheels are Linux-only, Metal is macOS), and every record's device
  is one the environment lists.
"""
from __future__ import annotations

import re

from ..evidence import paths, probes, strict
from .groups import Group

VERDICTS = {0: "VERDICT: defect absent", 1: "VERDICT: defect present", 125: "VERDICT: cannot test"}
MLX_PACKAGES = ("mlx", "mlx-cpu", "mlx-metal", "mlx-cuda", "mlx-cuda13", "mlx-cuda12")




def _records(data) -> list:
    recs = data.get("records") if isinstance(data, dict) else None
    return [r for r in recs or [] if isinstance(r, dict)]


# --- probes against results ------------------------------------------------------------------

def _probe_problem(name: str, rec: dict, data: dict) -> str | None:
    probe, device = probes.parse_output_name(name) or (None, None)
    tags = set(probes.PROBE_TAGS.get(probe, ()))
    env = data.get("environment") if isinstance(data.get("environment"), dict) else {}
    if rec["mlx"] != env.get("mlx") or rec["device"] != device:
        return None   # another MLX or device: nothing to compare (the caller notes it)
    relevant = [r for r in _records(data) if r.get("device") == device and r.get("expects_defect")
                and tags & set(r.get("defect_tags") or [])]
    if not relevant or rec["exit_code"] not in (0, 1):
        return None
    failing = [r["scenario"] for r in relevant if r.get("status") != "pass"]
    if rec["exit_code"] == 0 and failing:
        return f"{name} says the defect is absent, but {failing[0]} fails on mlx {rec['mlx']} {device}"
    if rec["exit_code"] == 1 and not failing:
        return (f"{name} says the defect is present, but all {len(relevant)} scenarios of its class "
                f"pass on mlx {rec['mlx']} {device}")
    return None


def probe_group(ev) -> list:
    outputs = [n for n in sorted(ev.files) if probes.parse_output_name(n)]
    results = strict.member(ev.files, paths.RESULTS)
    if not outputs or not isinstance(results, dict):
        return []
    g = Group("probe outputs vs results.json", "cross-checks")
    for n in outputs:
        rec = probes.recorded(ev.files[n].decode("utf-8", "replace"))
        if rec is None:
            continue
        env = results.get("environment") if isinstance(results.get("environment"), dict) else {}
        if rec["mlx"] != env.get("mlx"):
            g.note(f"{n}: not compared: the probe ran on mlx {rec['mlx']}, the results on mlx {env.get('mlx')}")
            continue
        problem = _probe_problem(n, rec, results)
        g.check(problem is None, problem or "")
    return [g] if g.total or g.notes else []


# --- native runs against commands.json -----------------------------------------------------

def native_group(ev, folder: str, verified: set) -> list:
    commands = strict.member(ev.files, folder + paths.COMMANDS)
    if not isinstance(commands, list):
        return []
    g = Group(f"{folder}{paths.COMMANDS} vs results", "cross-checks")
    for variant, results_name in _native_results(ev.files, folder):
        data = strict.member(ev.files, results_name)
        runs = [c for c in commands if isinstance(c, dict) and _is_run(c.get("id"), variant)]
        crashed = sum(r.get("status") == "crashed" for r in _records(data))
        failed_runs = sum(c.get("exit_code") != 0 for c in runs)
        g.check(bool(runs) or not _records(data), f"{results_name}: records but no run command recorded")
        g.check(failed_runs == crashed,
                f"{results_name}: {crashed} crashed records but {failed_runs} run commands exited non-zero")
        builds = [c for c in commands if isinstance(c, dict) and str(c.get("id", "")).startswith(("compile-", "link-"))
                  and c.get("exit_code") != 0]
        g.check(not builds or not _records(data),
                f"{results_name}: records exist although {builds[0].get('id') if builds else ''} failed")
    return [g] if g.total else []


def _native_results(files, folder):
    if folder + paths.RESULTS in files:
        yield "", folder + paths.RESULTS
    for v in ("pristine", "patched"):
        if folder + paths.results_for(v) in files:
            yield v, folder + paths.results_for(v)


def _is_run(cid, variant: str) -> bool:
    if not isinstance(cid, str):
        return False
    if not variant:
        return cid.startswith("run-")
    return cid == f"run-{variant}" or cid.startswith(f"run-{variant}-")


# --- version matrix against its logs ---------------------------------------------------------

def versions_group(ev, folder: str) -> list:
    doc = strict.member(ev.files, folder + paths.VERSIONS)
    if not isinstance(doc, dict):
        return []
    g = Group(f"{folder}{paths.VERSIONS} vs probe logs", "cells")
    for r in doc.get("releases") or []:
        for pid, cell in ((r.get("probes") or {}).items() if isinstance(r, dict) else ()):
            if not isinstance(cell, dict) or cell.get("exit_code") is None:
                continue
            log = ev.files.get(folder + str(cell.get("stdout")), b"").decode("utf-8", "replace")
            said = [ln for ln in log.splitlines() if ln.startswith("VERDICT: ")]
            # exit 1 without a "present" VERDICT is a probe that crashed in Python: "cannot test"
            # (versions.status_of; the versions check holds the status to that rule)
            crashed = cell.get("exit_code") == 1 and cell.get("status") == "cannot test"
            want = None if crashed else VERDICTS.get(cell.get("exit_code"))
            ok = want is None or (said and said[-1].startswith(want))
            g.check(bool(ok), f"{r.get('version')} {pid}: exit code {cell.get('exit_code')} but the log says "
                              f"{said[-1] if said else 'no VERDICT line'!r}")
    return [g] if g.total else []


# --- an environment record against itself ------------------------------------------------------

def _platform_problems(env: dict) -> list:
    plat = str(env.get("platform", "")).lower()
    pk = env.get("packages") if isinstance(env.get("packages"), dict) else {}
    devs = env.get("devices") if isinstance(env.get("devices"), dict) else {}
    out = []
    linux, mac = plat.startswith("linux"), plat.startswith(("macos", "darwin"))
    if mac and any(p in pk for p in ("mlx-cpu", "mlx-cuda", "mlx-cuda12", "mlx-cuda13")):
        out.append("a Linux-only MLX package on macOS")
    if linux and ("mlx-metal" in pk or "metal" in devs.values()):
        out.append("Metal on Linux")
    if mac and "cuda" in devs.values():
        out.append("CUDA on macOS")
    return out


def environment_problems(env) -> list:
    if not isinstance(env, dict):
        return []
    pk = env.get("packages") if isinstance(env.get("packages"), dict) else {}
    versions = {v for p, v in pk.items() if p in MLX_PACKAGES}
    out = _platform_problems(env)
    checkout = env.get("subject") == "mlx checkout"   # build_and_test.py: the checkout's version
    if env.get("mlx") is not None and versions and env.get("mlx") not in versions and not checkout:
        out.append(f"mlx {env.get('mlx')!r} is not the installed package's version {sorted(versions)}")
    if env.get("mlx") is not None and not re.match(r"^\d+\.\d+", str(env.get("mlx"))):
        out.append(f"mlx version {env.get('mlx')!r} is not a version")
    return out


def environment_group(ev) -> list:
    names = sorted(n for n in ev.files if paths.basename(n) == paths.ENVIRONMENT)
    if not names:
        return []
    g = Group("environment consistency", "records")
    for n in names:
        env = strict.member(ev.files, n)
        problems = environment_problems(env)
        results = strict.member(ev.files, paths.folder(n) + paths.RESULTS)
        listed = set((env or {}).get("devices") or {}) if isinstance(env, dict) else set()
        used = {r.get("device") for r in _records(results)}
        if listed and used - listed:
            problems.append(f"records on {sorted(used - listed)} which the environment does not list")
        g.item(problems, n)
    return [g]


def groups(ev, verified: set) -> list:
    out = probe_group(ev) + environment_group(ev)
    for folder in sorted({paths.folder(n) for n in ev.files if paths.basename(n) == paths.COMMANDS}):
        out += native_group(ev, folder, verified)
    for folder in sorted({paths.folder(n) for n in ev.files if paths.basename(n) == paths.VERSIONS}):
        out += versions_group(ev, folder)
    return out
