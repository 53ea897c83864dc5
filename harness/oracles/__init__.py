"""The oracles: one module each, listed once in ORACLES, in priority order (a
finding is named after the first oracle that flags it). A module holds its
table row (ORACLE: what it checks, in which contexts it runs, whether its
failure alone confirms a defect), its measuring function measure(trial, call)
-> [check] (MLX imported inside, through bridge.py), its offline recheck(check,
ctx) -> (reasons, new check) and, for an oracle whose findings show only under
its transform, its reproducer fragment (base.Repro).

Contexts: "run" (catalog, corpus and scenario files through `run`, `replay`
and `native`), "fuzz" (the fuzzer), "gate" (both builds of a patch gate), and
"validator" (the validator re-checks the row's records offline).

Adding an oracle is one module here and its line in ORACLES (with its import),
or a row in a plugin module's ORACLES (named in $MLX_VJPCHECK_PLUGINS): the
runner, the fuzzer, the gate, the validator and the reproducers read this
table and name no oracle themselves.

Support modules, no oracle: base (the row, the reproducer fragment, the
trial), bridge (the MLX bridge), recheck (what the rechecks share), transforms
(what the transform oracles share), directions (the random directions).
Everything imports numpy alone at its top level.
"""
from __future__ import annotations

from ..core.plugins import PluginError, modules as plugin_modules
from . import (backward_twice, compile, exact_zero, fd_elementwise, finite_differences, forward_mode,
               jvp_consistency, metamorphic, reference, refusal, second_order, vjp_exception, vmap)
from .base import CONTEXTS, Oracle, Repro, Trial  # noqa: F401  (the row's type, for plugins)

ORACLES = (
    vjp_exception,
    reference,
    exact_zero,
    refusal,
    compile,
    vmap,
    second_order,
    forward_mode,
    fd_elementwise,
    metamorphic,
    finite_differences,
    backward_twice,
    jvp_consistency,
)

BUILT_IN = tuple(m.ORACLE for m in ORACLES)

# What a first-order executor shows (the native C++ suite; an in-process first-order
# check): a tag an op says only a transform oracle reveals (OpInfo.revealed_by) is not
# expected of it.
FIRST_ORDER = tuple(o.name for o in BUILT_IN if o.first_order)
# What `failing` names besides oracles: the record has an error, its process died, the
# build did not run it.
OUTCOMES = ("error", "crashed", "missing")
# What a patch is held to for the ops in its scope (judging/gate_verdict.py): the
# first-order oracles, which check the gradient rules themselves, and the outcomes.
# Findings of the others (second order, vmap, compile, forward mode) on both builds are
# defects of other rules: listed, not blamed. For regressions every oracle counts.
HELD = FIRST_ORDER + OUTCOMES

_TABLE: list = []


def table() -> tuple:
    """Every oracle: the built-in rows, then plugins' rows, in priority order."""
    if not _TABLE:
        rows = list(BUILT_IN)
        for module in plugin_modules():
            rows += list(getattr(module, "ORACLES", ()))
        names = [o.name for o in rows]
        kinds = [k for o in rows for k in o.kinds]
        if len(set(names)) != len(names) or len(set(kinds)) != len(kinds):
            raise PluginError("two oracles share a name or a check kind")
        _TABLE.extend(rows)
    return tuple(_TABLE)


def in_context(context: str) -> tuple:
    return tuple(o for o in table() if o.runs_in(context))


def names() -> tuple:
    return tuple(o.name for o in table())


def confirming() -> tuple:
    return tuple(o.name for o in table() if o.confirms)


def of_kind(kind: str):
    """The row that makes checks of this kind (None for an unknown kind)."""
    return next((o for o in table() if kind in o.kinds), None)


def of_check(check: dict):
    """The row that made a recorded check (a check without a kind is the reference's)."""
    return of_kind(check.get("kind", "reference"))


def failed(checks) -> list:
    """(its oracle's row, or None for an unknown kind; the check) for each failed check."""
    return [(of_check(c), c) for c in checks or () if not c.get("passed")]


def failing(rec: dict | None) -> list:
    """What a record fails, sorted: the oracles whose checks fail, and "error" (it has
    an error, or a status that is no pass with no failed check), "crashed" (its process
    died), "missing" (the build did not run it). The gate's rules read it (with the
    held set above); the judge's findings take `failed` for the same answer per check."""
    if rec is None:
        return ["missing"]
    out = {row.name if row else str(c.get("kind")) for row, c in failed(rec.get("checks"))}
    if rec.get("status") == "crashed":
        out.add("crashed")
    elif rec.get("error"):
        out.add("error")
    if rec.get("status") not in (None, "pass") and not out:
        out.add("error")
    return sorted(out)


def judged_by(rec: dict | None) -> list:
    """The oracles whose checks are in a record, passed or not (vjp_exception when the
    VJP raised), in table order."""
    if not rec:
        return []
    named = {getattr(of_check(c), "name", None) for c in rec.get("checks") or ()}
    named |= {"vjp_exception"} if rec.get("error") else set()
    return [o for o in names() if o in named]
