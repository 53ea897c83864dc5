"""What `mlx-vjpcheck replay` executes again, decided from the files the evidence holds.

Every file of validated evidence is given to exactly one way of re-executing it,
or the evidence is refused with the reason: replay never leaves a record out
because of a label. The layout is the set of files the run directory holds, and
each layout is the output of one command, with a fixed list of the files that
command writes; a file outside that list (a stray `comparison.json` in a run
directory, a `sweep.json` beside a gate) refuses the evidence, it never changes
what runs. Inside a layout:

* run (`results.json` from `mlx-vjpcheck run`): every record through the
  catalog's Python worker;
* native wheel (`results.json` from `mlx-vjpcheck native`): every record through
  the C++ suite built against this wheel. The results file's `kind` names which
  of the two executors made the records; either way every recorded check must be
  given again by it (a relabelled file fails its re-execution: the executors
  make different checks), and a results file of any other kind is refused;
* fuzz (`findings.json`): every finding's record through every fuzz oracle, and
  the campaign's own claims (its findings, its seeds) by plain replay;
* sweep, gradcheck, versions: their own re-execution;
* native gate (`comparison.json`, `results-<build>.json`): the gate rebuilt from
  its commit and patch (build_and_test.py --replay), every results file of it and
  every MLX test compared.

Handoffs (issue texts, reproducers, patches: no measurement) and
`build_and_test.py --fuzz` runs are refused with that reason. Imports nothing but
the evidence's path names: it runs before MLX is imported.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..evidence import paths

# Files every layout may hold: the manifest (checked), the bundle's summary
# (regenerated from the other files by the validator) and the bundle's probe
# outputs (cross-checked with the results records, which are re-executed).
COMMON = (re.compile(r"MANIFEST\.sha256"), re.compile(r"SUMMARY\.md"), re.compile(r"probe-outputs/[^/]+"))
RESULT_KINDS = ("run", "native-wheel")   # the results files replay re-executes outside a gate
GATE_VARIANTS = ("pristine", "patched")


def _re(*patterns) -> tuple:
    return tuple(re.compile(p) for p in patterns)


_VARIANTS = "|".join(GATE_VARIANTS)
# The files each command writes (paths relative to the evidence root).
LAYOUTS = {
    "run": _re(r"results\.json", r"environment\.json"),
    "native-wheel": _re(r"results\.json", r"environment\.json", r"scenarios\.json", r"commands\.json",
                        r"logs/[^/]+"),
    "fuzz": _re(r"findings\.json", r"campaign\.json", r"environment\.json", r"findings/[^/]+\.json",
                r"findings/[^/]+_repro\.py"),
    "sweep": _re(r"sweep\.json", r"environment\.json"),
    "gradcheck": _re(r"gradcheck\.json", r"environment\.json"),
    "versions": _re(r"versions\.json", r"environment\.json", r"probes/[^/]+\.py", r"logs/[^/]+/.+"),
    "gate": _re(r"environment\.json", r"commands\.json", r"comparison\.json", rf"results-({_VARIANTS})\.json",
                r"gate\.json", r"mlx-tests\.json", r"patch\.diff", r"scenarios\.json", r"logs/[^/]+",
                rf"native/results-({_VARIANTS})\.json", r"native/comparison\.json", r"native/commands\.json",
                r"native/logs/[^/]+"),
}
# The files that must be there for the layout to be one run of its command.
REQUIRED = {
    "run": ("results.json", "environment.json"),
    "native-wheel": ("results.json", "environment.json", "scenarios.json", "commands.json"),
    "fuzz": ("findings.json", "campaign.json", "environment.json"),
    "sweep": ("sweep.json",),
    "gradcheck": ("gradcheck.json",),
    "versions": ("versions.json",),
    "gate": ("environment.json", "commands.json", "comparison.json", "results-pristine.json",
             "results-patched.json", "patch.diff", "scenarios.json", "gate.json"),
}
# What each layout's defining file is (the one file no other command writes).
DEFINING = {
    "fuzz": paths.FINDINGS, "sweep": paths.SWEEP, "gradcheck": paths.GRADCHECK, "versions": paths.VERSIONS,
    "gate": paths.COMPARISON,
}
# Files of commands whose evidence replay cannot execute again, and why.
NOT_REPLAYABLE = {
    paths.HANDOFF: "a handoff holds issue texts, reproducers and patches, no measurement to execute again",
    "fuzz-summary.json": "a native fuzz run (build_and_test.py --fuzz) is not replayed: its campaigns ran on "
                         "two builds of a checkout; replay the findings with build_and_test.py --scenarios",
    "replay.json": "a replay's own report: replay the gate run it compared, not the report",
}


@dataclass
class Plan:
    """The layout, and what runs again; `refused`: why the evidence is not replayed (empty: it is)."""
    layout: str | None = None
    refused: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.layout is not None and not self.refused


def _top(names: set) -> set:
    return {n for n in names if "/" not in n}


def _layout(names: set, doc) -> tuple:
    """(layout, refusals) from the top-level files: exactly one command's output."""
    top = _top(names)
    refused = [f"{n}: {why}" for n, why in sorted(NOT_REPLAYABLE.items()) if n in names]
    found = sorted(k for k, n in DEFINING.items() if n in top)
    if paths.RESULTS in top:
        data = doc(paths.RESULTS)
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind in RESULT_KINDS:
            found.append(kind)
        else:
            refused.append(f"{paths.RESULTS}: results of kind {kind!r}: replay re-executes run and native-wheel "
                           "results (and a gate's, in a gate run directory); these cannot be executed again")
    gate_marks = sorted(n for n in names if re.fullmatch(rf"(native/)?results-({_VARIANTS})\.json", n))
    if gate_marks and "gate" not in found:
        found.append("gate")
    if len(found) > 1:
        refused.append(f"the evidence holds the files of {len(found)} kinds of run ({', '.join(found)}): "
                       "one run directory is replayed at a time")
        return None, refused
    if not found:
        return None, refused or ["no run, fuzz, sweep, gradcheck, version matrix, native suite or gate files: "
                                 "nothing to execute again"]
    return found[0], refused


def plan(names, doc) -> Plan:
    """The plan for evidence whose files are `names`; `doc(name)` its parsed JSON."""
    names = set(names)
    layout, refused = _layout(names, doc)
    if layout is None:
        return Plan(None, refused)
    allowed = LAYOUTS[layout] + COMMON
    for n in sorted(names):
        if not any(p.fullmatch(n) for p in allowed):
            refused.append(f"{n}: not a file {_command(layout)} writes: the evidence is refused, not replayed "
                           "without it")
    missing = [n for n in REQUIRED[layout] if n not in names]
    if missing:
        refused.append(f"{_command(layout)} evidence without {', '.join(missing)}: it cannot be executed again")
    refused += _results_kinds(names, layout, doc)
    return Plan(layout, refused)


def _results_kinds(names: set, layout: str, doc) -> list:
    """In a gate, every results file is one the gate writes (its kind says which build made it)."""
    if layout != "gate":
        return []
    out = []
    for n in sorted(x for x in names if paths.is_results(x)):
        data = doc(n)
        kind = data.get("kind") if isinstance(data, dict) else None
        variant = paths.basename(n)[len("results-"):-len(".json")]
        want = [f"native-{variant}"] + ([] if n.startswith("native/") else [f"gate-{variant}"])
        if kind not in want:
            out.append(f"{n}: results of kind {kind!r} where the gate writes {' or '.join(map(repr, want))}")
    return out


def _command(layout: str) -> str:
    return {"run": "`mlx-vjpcheck run`", "native-wheel": "`mlx-vjpcheck native`", "fuzz": "`mlx-vjpcheck fuzz`",
            "sweep": "`mlx-vjpcheck sweep`", "gradcheck": "`mlx-vjpcheck gradcheck`",
            "versions": "`mlx-vjpcheck versions`", "gate": "build_and_test.py"}[layout]
