"""Validate an evidence directory or bundle: python validate_artifacts.py DIR|ZIP.

Checks, one output line per group: the manifest (every listed file present
with its hash, nothing unlisted, no path outside the bundle); every results
file recomputed from its recorded inputs with the float64 references and
every verdict re-derived; native command records and the pristine-vs-patched
table; fuzz findings; recorded probe outputs; SUMMARY.md regenerated.

Exit 0 all checks pass, 1 any fails (including hostile archive entries),
2 bad input. Imports numpy and the harness's reference path only, never mlx.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import PurePosixPath

from . import (manifest, opinfo, probe_runs, summary, validate_fuzz, validate_native, validate_records,
               validate_versions)
from .safezip import unsafe_path
from .validate_group import Group
from .validate_load import BadInput, Evidence, load


def check_manifest(ev: Evidence) -> tuple:
    """(group, paths whose hash verified, every path the manifest names)."""
    g, verified, named = Group("manifest", "files"), set(), set()
    try:
        entries = manifest.parse(ev.files[manifest.NAME].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        g.fail(f"{manifest.NAME} is malformed: {e}")
        return g, verified, named
    for digest, path in entries:
        why = unsafe_path(path)
        if why:
            g.fail(f"manifest lists a path outside the bundle: {why}")
        elif path in named:
            g.fail(f"manifest lists {path!r} twice")
        elif path not in ev.files:
            g.fail(f"missing: {path} (listed in the manifest)")
        elif manifest.sha256(ev.files[path]) != digest:
            g.fail(f"sha256 mismatch: {path}")
        else:
            g.check(True)
            verified.add(path)
        named.add(path)
    for path in sorted(set(ev.files) - named - {manifest.NAME}):
        g.fail(f"unlisted file: {path}")
    return g, verified, named


def _json(ev: Evidence, name: str, group: Group):
    if name not in ev.files:
        group.fail(f"{name}: missing")
        return None
    try:
        return json.loads(ev.files[name])
    except (ValueError, UnicodeDecodeError) as e:
        group.fail(f"{name}: not valid JSON ({e})")
        return None


def _folder(name: str) -> str:
    parent = str(PurePosixPath(name).parent)
    return "" if parent == "." else parent + "/"


def _basename(name: str) -> str:
    return PurePosixPath(name).name


def is_results_name(name: str) -> bool:
    base = _basename(name)
    return base.startswith("results") and base.endswith(".json")


def results_groups(ev, names, rc) -> list:
    out = []
    for name in sorted(n for n in names if is_results_name(n)):
        g = Group(name)
        data = _json(ev, name, g)
        if data is not None:
            validate_records.check_results(g, name, data, rc)
            n = len(data.get("records") or []) if isinstance(data, dict) else 0
            g.detail = f"recomputed {n} records, "
        out.append(g)
    return out


def environment_groups(ev, names) -> list:
    out = []
    for name in sorted(n for n in names if _basename(n) == "environment.json"):
        g = Group(name)
        env = _json(ev, name, g)
        if env is None:
            out.append(g)
            continue
        g.check(isinstance(env, dict) and "python" in env and "platform" in env,
                f"{name}: not an environment record (needs python and platform)")
        sibling = _folder(name) + "results.json"
        if sibling in ev.files:
            try:
                recorded = json.loads(ev.files[sibling]).get("environment")
            except (ValueError, UnicodeDecodeError, AttributeError):
                recorded = None
            g.check(recorded == env, f"{name}: differs from the environment inside {sibling}")
        out.append(g)
    return out


def native_groups(ev, names, verified) -> list:
    out = []
    for name in sorted(n for n in names if _basename(n) == "commands.json"):
        g = Group(name, "commands")
        data = _json(ev, name, g)
        if data is not None:
            validate_native.check_commands(g, _folder(name), data, verified)
        out.append(g)
    for name in sorted(n for n in names if _basename(n) == "comparison.json"):
        g, folder = Group(name, "rows"), _folder(name)
        data = _json(ev, name, g)
        pristine = _json(ev, folder + "results-pristine.json", g)
        patched = _json(ev, folder + "results-patched.json", g)
        if data is not None and pristine is not None and patched is not None:
            validate_native.check_comparison(g, folder, data, pristine, patched)
        out.append(g)
    return out


def fuzz_groups(ev, names, rc) -> list:
    out = []
    for name in sorted(n for n in names if _basename(n) == "findings.json"):
        g = Group(name)
        if _json(ev, name, g) is not None:
            validate_fuzz.check_findings(g, _folder(name), ev.files, rc)
        out.append(g)
    return out


def versions_groups(ev, names, verified) -> list:
    out = []
    for name in sorted(n for n in names if _basename(n) == "versions.json"):
        g = Group(name)
        doc = _json(ev, name, g)
        if doc is not None:
            validate_versions.check_versions(g, _folder(name), doc, ev.files, verified)
        out.append(g)
    return out


def extra_groups(ev) -> list:
    out = []
    probes = sorted(n for n in ev.files if n.startswith(probe_runs.FOLDER + "/"))
    if probes:
        g = Group("probe outputs", "outputs")
        for n in probes:
            g.item(probe_runs.problems(ev.files[n].decode("utf-8", "replace")), n)
        out.append(g)
    if summary.NAME in ev.files:
        g = Group(summary.NAME, "files")
        g.check(ev.files[summary.NAME] == summary.render(ev.files).encode("utf-8"),
                f"{summary.NAME} differs from the summary regenerated from the evidence files")
        out.append(g)
    return out


LAYOUT_FILES = ("commands.json", "findings.json", "versions.json")


def known_layout(names: set) -> bool:
    return any(is_results_name(n) or _basename(n) in LAYOUT_FILES for n in names)


def validate(ev: Evidence) -> list:
    """All check groups for loaded evidence; raises BadInput for an unknown layout."""
    if ev.problems:
        g = Group("archive", "entries")
        for why in ev.problems:
            g.fail(f"rejected: {why}")
        return [g]
    mg, verified, named = check_manifest(ev)
    names = set(ev.files) | {n for n in named if not unsafe_path(n)}
    if not known_layout(names):
        raise BadInput(f"{ev.source}: unknown layout (no results*.json, "
                       f"{', '.join(LAYOUT_FILES)})")
    rc = validate_records.Recomputer()
    steps = [(results_groups, (ev, names, rc)), (environment_groups, (ev, names)),
             (native_groups, (ev, names, verified)), (fuzz_groups, (ev, names, rc)),
             (versions_groups, (ev, names, verified)), (extra_groups, (ev,))]
    return [mg] + [g for fn, args in steps for g in _guarded(fn, *args)]


def _guarded(fn, *args) -> list:
    """A malformed file that slips past a checker's own guards fails its group, never crashes."""
    try:
        return fn(*args)
    except Exception as e:
        g = Group(fn.__name__.replace("_groups", ""))
        g.fail(f"cannot be checked: malformed content ({type(e).__name__}: {e})")
        return [g]


def report(groups: list) -> tuple:
    """(lines, all passed)."""
    lines = [line for g in groups for line in g.lines()]
    ok, total = sum(g.ok for g in groups), sum(g.total for g in groups)
    passed = total > 0 and all(g.passed for g in groups)
    return lines + [f"{ok}/{total} checks passed"], passed


def _plugins() -> None:
    """Ops registered through $MLX_VJPCHECK_PLUGINS: named by the user, never by the evidence."""
    try:
        opinfo.load_plugins()
    except Exception as e:
        raise BadInput(f"${opinfo.PLUGINS_ENV}: cannot import a plugin ({type(e).__name__}: {e})") from None


def main(argv=None, prog="validate_artifacts.py") -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="evidence directory or bundle .zip")
    args = ap.parse_args(argv)
    try:
        _plugins()
        groups = validate(load(args.path))
    except BadInput as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    lines, passed = report(groups)
    try:
        print("\n".join(lines), flush=True)
    except BrokenPipeError:   # `| head`: the reader left; the exit code still tells
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0 if passed else 1
