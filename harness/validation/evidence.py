"""Validate loaded evidence (a run directory or bundle): one group of checks per file.

The manifest first (every listed file present with its hash, nothing unlisted,
no path outside the bundle); then each evidence file by its kind (the KINDS
table): results files recomputed from their recorded inputs with the float64
references and every verdict re-derived; environment records; native command
records and the pristine-vs-patched table; fuzz findings; version matrices;
finally the recorded probe outputs and a regenerated SUMMARY.md.

Imports numpy and the reference path only, never mlx.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core import jsonio
from ..evidence import manifest, paths, probes, summary
from ..evidence.load import BadInput, Evidence
from ..evidence.safezip import unsafe_path
from . import binding, crosschecks
from . import fuzz as fuzz_checks
from . import native as native_checks
from . import records
from . import versions as versions_checks
from .groups import Group


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
        return jsonio.parsed(ev.files[name])
    except (ValueError, UnicodeDecodeError) as e:
        group.fail(f"{name}: not valid JSON ({e})")
        return None


@dataclass
class Context:
    """What every file checker may consult besides its own file."""
    ev: Evidence
    verified: set      # manifest paths whose hash verified
    recomputer: records.Recomputer


def check_results(g: Group, ctx: Context, name: str, data) -> None:
    records.check_results(g, name, data, ctx.recomputer)
    if isinstance(data, dict) and data.get("schema") == records.results.SCHEMA:
        binding.check(g, name, data)
    g.detail = f"recomputed {len(data.get('records') or []) if isinstance(data, dict) else 0} records, "


def check_environment(g: Group, ctx: Context, name: str, env) -> None:
    g.check(isinstance(env, dict) and "python" in env and "platform" in env,
            f"{name}: not an environment record (needs python and platform)")
    sibling = paths.folder(name) + paths.RESULTS
    if sibling in ctx.ev.files:
        try:
            recorded = jsonio.parsed(ctx.ev.files[sibling]).get("environment")
        except (ValueError, UnicodeDecodeError, AttributeError):
            recorded = None
        g.check(recorded == env, f"{name}: differs from the environment inside {sibling}")


def check_commands(g: Group, ctx: Context, name: str, data) -> None:
    native_checks.check_commands(g, paths.folder(name), data, ctx.verified)


def check_comparison(g: Group, ctx: Context, name: str, data) -> None:
    folder = paths.folder(name)
    pristine = _json(ctx.ev, folder + paths.results_for("pristine"), g)
    patched = _json(ctx.ev, folder + paths.results_for("patched"), g)
    if pristine is not None and patched is not None:
        native_checks.check_comparison(g, folder, data, pristine, patched)


def check_findings(g: Group, ctx: Context, name: str, data) -> None:
    fuzz_checks.check_findings(g, paths.folder(name), ctx.ev.files, ctx.recomputer)


def check_versions(g: Group, ctx: Context, name: str, doc) -> None:
    versions_checks.check_versions(g, paths.folder(name), doc, ctx.ev.files, ctx.verified)


@dataclass(frozen=True)
class Kind:
    """One kind of evidence file: which paths are of it, what its group counts,
    the checker (group, context, path, parsed JSON), and whether the file alone
    makes a directory evidence (environment.json does not)."""
    matches: Callable
    noun: str
    check: Callable
    defines_layout: bool = True


def _named(base: str) -> Callable:
    return lambda name: paths.basename(name) == base


# In output order.
KINDS = (
    Kind(paths.is_results, "checks", check_results),
    Kind(_named(paths.ENVIRONMENT), "checks", check_environment, defines_layout=False),
    Kind(_named(paths.COMMANDS), "commands", check_commands),
    Kind(_named(paths.COMPARISON), "rows", check_comparison, defines_layout=False),
    Kind(_named(paths.FINDINGS), "checks", check_findings),
    Kind(_named(paths.VERSIONS), "checks", check_versions),
)


def kind_groups(kind: Kind, ctx: Context, names: set) -> list:
    out = []
    for name in sorted(n for n in names if kind.matches(n)):
        g = Group(name, kind.noun)
        data = _json(ctx.ev, name, g)
        if data is not None:
            _guarded(g, kind.check, g, ctx, name, data)
        out.append(g)
    return out


def probe_groups(ev: Evidence) -> list:
    outputs = sorted(n for n in ev.files if n.startswith(probes.FOLDER + "/"))
    if not outputs:
        return []
    g = Group("probe outputs", "outputs")
    for n in outputs:
        g.item(probes.problems(ev.files[n].decode("utf-8", "replace")), n)
    return [g]


def summary_groups(ev: Evidence) -> list:
    if summary.NAME not in ev.files:
        return []
    g = Group(summary.NAME, "files")
    g.check(ev.files[summary.NAME] == summary.render(ev.files).encode("utf-8"),
            f"{summary.NAME} differs from the summary regenerated from the evidence files")
    return [g]


def known_layout(names: set) -> bool:
    return any(k.matches(n) for k in KINDS if k.defines_layout for n in names)


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
        raise BadInput(f"{ev.source}: unknown layout (no results*.json, {paths.COMMANDS}, "
                       f"{paths.FINDINGS} or {paths.VERSIONS})")
    ctx = Context(ev, verified, records.Recomputer())
    groups = [mg] + [g for kind in KINDS for g in kind_groups(kind, ctx, names)]
    return groups + probe_groups(ev) + crosschecks.groups(ev, verified) + summary_groups(ev)


def _guarded(group: Group, fn, *args) -> None:
    """A malformed file that slips past a checker's own guards fails its group, never crashes."""
    try:
        fn(*args)
    except Exception as e:
        group.fail(f"cannot be checked: malformed content ({type(e).__name__}: {e})")


def report(groups: list) -> tuple:
    """(lines, all passed)."""
    lines = [line for g in groups for line in g.lines()]
    ok, total = sum(g.ok for g in groups), sum(g.total for g in groups)
    passed = total > 0 and all(g.passed for g in groups)
    return lines + [f"{ok}/{total} checks passed"], passed


def check(ev: Evidence) -> tuple:
    """(lines, passed) for loaded evidence: what `bundle` needs."""
    return report(validate(ev))
