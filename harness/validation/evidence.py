"""Validate loaded evidence (a run directory or bundle): one group of checks per file.

The manifest first (every listed file present with its hash, nothing unlisted,
no path outside the bundle). Then every JSON file is read within fixed bounds
(evidence/strict.py) and held to its published schema (evidence/schemas/, by
the KINDS table; a JSON file of no kind is refused); then each is checked by
its kind: results files recomputed from their recorded inputs with the float64
references, every verdict re-derived and the record set bound to the catalog
(or said to be unbound); environment records; native command records and the
pristine-vs-patched table re-derived; fuzz findings bound to their index,
reproducers and campaign; version matrices; finally the recorded probe outputs,
the cross-checks between files and a regenerated SUMMARY.md.

What the checks establish is the first trust level, "consistent"; the facts
they gather (bindings, what can be replayed) are what the verdict lines
(verdicts.py) state. Imports numpy and the reference path only, never mlx.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

from ..evidence import manifest, paths, probes, strict, summary
from ..judging import gate_verdict
from ..evidence.load import BadInput, Evidence
from ..evidence.safezip import unsafe_path
from . import binding, catalog_table, crosschecks, schema
from . import fuzz as fuzz_checks
from . import gradcheck as gradcheck_checks
from . import native as native_checks
from . import records
from . import sweep as sweep_checks
from .groups import Group


@dataclass
class Facts:
    """What the checks found out beyond pass / fail, for the verdict lines."""
    bindings: list = field(default_factory=list)    # binding.Binding per results file
    fuzz: list = field(default_factory=list)        # fuzz.FuzzFacts per findings.json
    gates: list = field(default_factory=list)       # native.GateFacts per comparison.json
    mlx_tests: dict = field(default_factory=dict)   # folder -> (ok, line)
    versions: list = field(default_factory=list)    # folders holding a versions.json
    sweeps: list = field(default_factory=list)      # sweep.SweepFacts per sweep.json
    gradchecks: list = field(default_factory=list)  # folders holding a gradcheck.json


@dataclass
class Context:
    """What every file checker may consult besides its own file."""
    ev: Evidence
    verified: set      # manifest paths whose hash verified
    recomputer: records.Recomputer
    table: catalog_table.Table
    facts: Facts
    # path -> records.Started: a results file's rechecks begun before its schema check
    started: dict = field(default_factory=dict)
    # SUMMARY.md's check, made while the other CPUs recheck records, reported in its turn
    summary: Ahead | None = None

    @property
    def files(self):
        return self.ev.files


def _hashed_meanwhile(files):
    """{path: sha256} of every file, computed on another thread while the caller measures
    the JSON files' shapes (hashlib lets go of the interpreter's lock over large buffers, so
    the two passes over a 30 MB results file share the time of one); join() gives them."""
    digests = {}

    def work():
        for path, data in files.items():
            digests[path] = manifest.sha256(data)

    thread = threading.Thread(target=work, name="sha256", daemon=True)
    thread.start()
    return lambda: (thread.join(), digests)[1]


def check_manifest(ev: Evidence, digests: dict | None = None) -> tuple:
    """(group, paths whose hash verified, every path the manifest names); `digests`, when
    given, the files' hashes computed already."""
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
        elif (digests[path] if digests and path in digests else manifest.sha256(ev.files[path])) != digest:
            g.fail(f"sha256 mismatch: {path}")
        else:
            g.check(True)
            verified.add(path)
        named.add(path)
    for path in sorted(set(ev.files) - named - {manifest.NAME}):
        g.fail(f"unlisted file: {path}")
    return g, verified, named


# --- the checkers, one per kind (called with schema-valid data) --------------------------------------

def results_kind_problem(name: str, kind) -> str | None:
    """A results file's kind is the one its command writes at that place: results.json a
    run's or the C++ suite's against the wheel; results-<build>.json a gate's build, by the
    harness or the C++ suite (native/: the suite). A label never moves records elsewhere."""
    base = paths.basename(name)
    if base == paths.RESULTS:
        want = ("run", "native-wheel")
    else:
        variant = base[len("results-"):-len(".json")]
        want = (f"native-{variant}",) + (() if name.startswith("native/") else (f"gate-{variant}",))
        if variant not in native_checks.VARIANTS:
            return f"{name}: not a results file any command writes"
    return None if kind in want else f"{name}: kind {kind!r} where that file is of kind {' or '.join(want)}"


def check_results(g: Group, ctx: Context, name: str, data) -> None:
    why = results_kind_problem(name, data.get("kind"))
    g.check(why is None, why or "")
    records.check_results(g, name, data, ctx.recomputer, ctx.started.pop(name, None))
    ctx.facts.bindings.append(binding.check(g, name, data, ctx.table, ctx.recomputer.digest))
    g.detail = f"recomputed {len(data['records'])} records, "


def check_environment(g: Group, ctx: Context, name: str, env) -> None:
    sibling = paths.folder(name) + paths.RESULTS
    recorded = ctx.files.doc(sibling)
    if isinstance(recorded, dict):
        g.check(recorded.get("environment") == env, f"{name}: differs from the environment inside {sibling}")
    else:
        g.check(True)


def check_commands(g: Group, ctx: Context, name: str, data) -> None:
    native_checks.check_commands(g, paths.folder(name), data, ctx.verified)


def check_comparison(g: Group, ctx: Context, name: str, data) -> None:
    ctx.facts.gates.append(native_checks.check_comparison(g, paths.folder(name), data, ctx.files, ctx.table))


def check_findings(g: Group, ctx: Context, name: str, data) -> None:
    ctx.facts.fuzz.append(fuzz_checks.check_findings(g, paths.folder(name), ctx.files, ctx.recomputer))


def check_sweep(g: Group, ctx: Context, name: str, doc) -> None:
    ctx.facts.sweeps.append(sweep_checks.check_sweep(g, paths.folder(name), doc, ctx.files))
    g.detail = f"re-derived {len(doc['records'])} records, "


def check_gradcheck(g: Group, ctx: Context, name: str, doc) -> None:
    gradcheck_checks.check_gradcheck(g, paths.folder(name), doc, ctx.files)
    ctx.facts.gradchecks.append(paths.folder(name))


def check_versions(g: Group, ctx: Context, name: str, doc) -> None:
    # imported here: only version matrices need it (and what it imports)
    from . import versions as versions_checks
    versions_checks.check_versions(g, paths.folder(name), doc, ctx.files, ctx.verified)
    ctx.facts.versions.append(paths.folder(name))


def check_handoff(g: Group, ctx: Context, name: str, doc) -> None:
    # imported here: only handoffs need it (and the register)
    from . import handoff as handoff_checks
    handoff_checks.check_handoff(g, paths.folder(name), doc, ctx.files, ctx.verified)


def check_mlx_tests(g: Group, ctx: Context, name: str, doc) -> None:
    gate_doc = strict.member(ctx.files, paths.folder(name) + native_checks.GATE)
    ctx.facts.mlx_tests[paths.folder(name)] = native_checks.check_mlx_tests(
        g, name, doc, gate_verdict.recorded_reruns(gate_doc))


@dataclass(frozen=True)
class Kind:
    """One kind of evidence file: which paths are of it, its published schema, what
    its group counts and the checker (group, context, path, parsed JSON; None: the
    schema is all, or another kind's checker reads it), and whether the file alone
    makes a directory evidence."""
    matches: Callable
    schema: str
    noun: str = "checks"
    check: Callable | None = None
    defines_layout: bool = False


def _named(base: str) -> Callable:
    return lambda name: paths.basename(name) == base


def _in(folder: str) -> Callable:
    return lambda name: paths.basename(paths.folder(name)[:-1]) == folder and name.endswith(".json")


# In output order; the first kind a path matches is its kind.
KINDS = (
    Kind(fuzz_checks.is_record_file, "fuzz-finding.schema.json"),
    Kind(_in("candidates"), "regression.schema.json"),
    Kind(paths.is_results, "results.schema.json", "checks", check_results, True),
    Kind(_named(paths.ENVIRONMENT), "environment.schema.json", "checks", check_environment),
    Kind(_named(paths.COMMANDS), "commands.schema.json", "commands", check_commands, True),
    Kind(_named(paths.COMPARISON), "comparison.schema.json", "rows", check_comparison),
    Kind(_named(native_checks.MLX_TESTS), "mlx-tests.schema.json", "rows", check_mlx_tests),
    Kind(_named(paths.FINDINGS), "findings-index.schema.json", "checks", check_findings, True),
    Kind(_named(paths.VERSIONS), "versions.schema.json", "checks", check_versions, True),
    Kind(_named(paths.HANDOFF), "handoff.schema.json", "checks", check_handoff, True),
    Kind(_named(paths.SWEEP), "sweep.schema.json", "checks", check_sweep, True),
    Kind(_named(paths.GRADCHECK), "gradcheck.schema.json", "checks", check_gradcheck, True),
    Kind(_named(paths.CAMPAIGN), "campaign.schema.json"),
    Kind(_named(paths.SCENARIOS), "scenarios.schema.json"),
    Kind(_named(native_checks.GATE), "gate.schema.json"),
    Kind(_named("fuzz-summary.json"), "fuzz-summary.schema.json"),
    Kind(_named("replay.json"), "gate-replay.schema.json"),
)


def kind_of(name: str) -> Kind | None:
    return next((k for k in KINDS if k.matches(name)), None)


def _readable(ctx: Context, name: str, kind: Kind, g: Group):
    """The parsed file when it is strict JSON within bounds and follows its schema."""
    data = ctx.files.doc(name)
    if data is None:
        g.fail(ctx.files.problems.get(name) or f"{name}: missing")
        return None
    why = schema.problem(kind.schema, data)
    if why:
        g.fail(f"{name}: {why}")
        return None
    return data


class Ahead:
    """A check made before its turn, while this process would otherwise wait for the other
    CPUs' rechecks; take() gives its value in its turn, or raises what it raised then."""

    def __init__(self, fn, *args):
        self.fn, self.args, self.done, self.value, self.error = fn, args, False, None, None

    def run(self) -> None:
        if not self.done:
            self.done = True
            try:
                self.value = self.fn(*self.args)
            except Exception as e:
                self.error = e

    def take(self):
        self.run()
        if self.error is not None:
            raise self.error
        return self.value


def _start_early(ctx: Context, kind: Kind, name: str) -> None:
    """A results file's record rechecks begun on the other CPUs before its schema check,
    which this process makes meanwhile; they count only when the schema passes (check_results
    then takes them up), and are dropped otherwise: the output is the one of checking in turn."""
    data = ctx.files.doc(name)
    if kind.check is check_results and isinstance(data, dict):
        ctx.started[name] = records.start_results(name, data, ctx.recomputer)


def _sorted_by_kind(names: set) -> tuple:
    """({kind: its JSON files, in order}, [why a JSON file has no kind or no place])."""
    refused, by_kind = [], {k: [] for k in KINDS}
    for name in sorted(n for n in names if n.endswith(".json")):
        kind = kind_of(name)
        if kind is None:
            refused.append(f"{name}: no schema: not a file mlx-vjpcheck writes")
        elif kind.matches is fuzz_checks.is_record_file and _index_of(name) not in names:
            refused.append(f"{name}: a finding that no {paths.FINDINGS} lists")
        else:
            by_kind[kind].append(name)
    return by_kind, refused


def parse_all(files, names: set) -> None:
    """Parse every JSON file file_groups will check, in the order it checks them (the
    bounds on all files together are met in the same order); the parsed files are kept."""
    by_kind, _ = _sorted_by_kind(names)
    for kind in KINDS:
        for name in by_kind[kind]:
            files.doc(name)


def file_groups(ctx: Context, names: set) -> list:
    """Every JSON file: parsed, schema-checked, then checked by its kind."""
    plain = Group("other JSON files", "files follow their schemas")
    by_kind, refused = _sorted_by_kind(names)
    for why in refused:
        plain.fail(why)
    out = []
    for kind in KINDS:
        for name in by_kind[kind]:
            if kind.check is None:
                if _readable(ctx, name, kind, plain) is not None:
                    plain.check(True)
                continue
            g = Group(name, kind.noun)
            _start_early(ctx, kind, name)
            try:
                data = _readable(ctx, name, kind, g)
                if data is not None and name in ctx.started and ctx.summary is not None:
                    ctx.summary.run()   # the others recheck meanwhile
                if data is not None:
                    _guarded(g, kind.check, g, ctx, name, data)
            finally:   # not checked after all (the schema refused it): the work begun is dropped
                started = ctx.started.pop(name, None)
                if started is not None:
                    started.cancel()
            out.append(g)
    return out + ([plain] if plain.total else [])


def _index_of(record_file: str) -> str:
    """findings.json of the run a findings/<signature>.json belongs to."""
    return paths.folder(paths.folder(record_file)[:-1]) + paths.FINDINGS


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


def _gate_verdicts(ctx: Context) -> None:
    gate_doc = ctx.files.doc(native_checks.GATE)
    fixes = gate_doc.get("fixes") if isinstance(gate_doc, dict) else None
    # a series' manifest claims only widen the scope (more ops held), never narrow it
    claims = gate_doc.get("claims") if isinstance(gate_doc, dict) and isinstance(gate_doc.get("claims"), list) else None
    inferred = gate_doc.get("inferred") if isinstance(gate_doc, dict) else None
    ops = inferred.get("ops") if isinstance(inferred, dict) and isinstance(inferred.get("ops"), dict) else None
    sweep = gate_doc.get("sweep_reproducers") if isinstance(gate_doc, dict) else None
    for facts in ctx.facts.gates:
        what = "native" if facts.folder else "harness"
        # the sweep's reproducers ran once, beside the harness's scenarios
        native_checks.gate_verdict(facts, fixes, what, claims, ops,
                                   sweep if not facts.folder and isinstance(sweep, dict) else None)


def validate_all(ev: Evidence, use_cache: bool = True) -> tuple:
    """(check groups, facts) for loaded evidence; raises BadInput for an unknown layout."""
    facts = Facts()
    if ev.problems:
        g = Group("archive", "entries")
        for why in ev.problems:
            g.fail(f"rejected: {why}")
        return [g], facts
    joined = _hashed_meanwhile(dict(ev.files))
    if isinstance(ev.files, strict.Files):
        for name in ev.files:
            if name.endswith(".json"):
                ev.files.measure(name)   # bounds first, while the other thread hashes
    mg, verified, named = check_manifest(ev, joined())
    names = set(ev.files) | {n for n in named if not unsafe_path(n)}
    if not known_layout(names):
        raise BadInput(f"{ev.source}: unknown layout (no results*.json, {paths.COMMANDS}, "
                       f"{paths.FINDINGS}, {paths.VERSIONS}, {paths.HANDOFF}, {paths.SWEEP} or {paths.GRADCHECK})")
    present = {n for n in names if n in ev.files}
    parse_all(ev.files, present)   # first: the text of a file is let go as the table comes in
    table = catalog_table.get(use_cache)
    ctx = Context(ev, verified, records.Recomputer(table), table, facts, summary=Ahead(summary_groups, ev))
    groups = [mg] + file_groups(ctx, present)
    _gate_verdicts(ctx)
    groups += probe_groups(ev) + crosschecks.groups(ev, verified) + ctx.summary.take()
    return groups, facts


def validate(ev: Evidence) -> list:
    """All check groups for loaded evidence; raises BadInput for an unknown layout."""
    return validate_all(ev)[0]


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
