"""The oracles, listed once in ORACLES: what each checks, in which contexts it
runs, the MLX-side function that measures it, how the validator re-checks
what it recorded, and whether its failure alone confirms a defect.

Contexts: "run" (catalog, corpus and scenario files through `run`, `replay`
and `native`), "fuzz" (the fuzzer), "gate" (both builds of a patch gate), and
"validator" (the validator re-checks the row's records offline).

Adding an oracle is one row here (or in a plugin module's ORACLES, named in
$MLX_VJPCHECK_PLUGINS) and one measuring function; the runner, the fuzzer,
the gate and the validator read this table and name no oracle themselves.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core.plugins import PluginError, modules as plugin_modules
from . import rechecks

CONTEXTS = ("run", "fuzz", "gate", "validator")


@dataclass(frozen=True)
class Oracle:
    # Identity: the name findings and signatures use, and one line for people.
    name: str
    summary: str
    # The `kind` of the checks it makes (unique across rows: a check's kind names its oracle).
    kinds: tuple
    # Contexts that run it; "validator" when its records are re-checked offline.
    where: tuple
    # "module:attr" of measure(trial) -> [check] on the MLX side (running/oracles.py);
    # None: measured by running/execute.py itself (the VJP's own exception, recorded as the
    # record's error; an error input's refusal).
    measure: str | None
    # How the validator re-derives one of its checks: recheck(check, ctx) -> (reasons, new check).
    recheck: Callable | None
    # Its failure alone makes a finding; the others need a confirming oracle to agree.
    confirms: bool

    def __post_init__(self):
        bad = set(self.where) - set(CONTEXTS)
        if bad:
            raise ValueError(f"oracle {self.name!r}: unknown contexts {sorted(bad)}")
        if ("validator" in self.where) != (self.recheck is not None):
            raise ValueError(f"oracle {self.name!r}: a row re-checked by the validator needs a recheck, "
                             "and only such a row has one")

    def runs_in(self, context: str) -> bool:
        return context in self.where


R = ".running.oracles"

# What a first-order executor shows (the native C++ suite; an in-process first-order
# check): a tag an op says only a transform oracle reveals (OpInfo.revealed_by) is not
# expected of it.
FIRST_ORDER = ("vjp_exception", "reference", "exact_zero", "refusal", "fd_elementwise")

# Priority order: a finding is named after the first oracle that flags it.
BUILT_IN = (
    Oracle("vjp_exception", "the VJP raised (or the process died) where the forward succeeded",
           (), ("run", "fuzz", "gate"), None, None, confirms=True),
    Oracle("reference", "MLX against the float64 reference: forward, every gradient, loss, H @ 1",
           ("reference",), ("run", "fuzz", "gate", "validator"), f"{R}:reference",
           rechecks.reference, confirms=True),
    Oracle("exact_zero", "exact zeros wherever the float64 reference is exactly zero (exact ops, float32)",
           ("exact_zero",), ("fuzz", "validator"), f"{R}:exact_zero", rechecks.self_consistent,
           confirms=True),
    Oracle("refusal", "an error input (OpInfo.error_inputs), which MLX's forward refuses, is refused by the "
                      "VJP too (a crash there is the record's own); one VJP an error input, everywhere",
           ("refusal",), ("run", "fuzz", "gate", "validator"), None, rechecks.self_consistent, confirms=True),
    Oracle("compile", "mx.compile of the VJP against the float64 reference (status: compile raises where "
                      "eager works); not in run: each new fused CPU kernel is a g++ -O3 build (2-3 s, "
                      "cached under $TMPDIR/mlx/<version>/cpu), about 150 for a cold catalog run (3 min)",
           ("compile",), ("fuzz", "gate", "validator"), f"{R}:compiled", rechecks.transformed,
           confirms=True),
    Oracle("vmap", "mx.vmap of the VJP over two examples (cotangents g and -2 g, operands stacked) against "
                   "the float64 reference of each (status: vmap raises where the forward maps); one batched "
                   "call, everywhere",
           ("vmap",), ("run", "fuzz", "gate", "validator"), f"{R}:vmapped", rechecks.transformed,
           confirms=True),
    Oracle("second_order", "the VJP of the VJP along a random u: H u and J u against float64 differences of "
                           "the hand-written reference VJP and forward (status: second order raises where "
                           "first order works); eight reference VJPs a call, everywhere",
           ("second_order",), ("run", "fuzz", "gate", "validator"), f"{R}:second_order",
           rechecks.directional, confirms=True),
    Oracle("forward_mode", "mx.jvp along a random u against the float64 directional derivative of the "
                           "reference (no JVP rule in MLX: not applicable, noted); eight forwards, everywhere",
           ("forward_mode",), ("run", "fuzz", "gate", "validator"), f"{R}:forward_mode",
           rechecks.directional, confirms=True),
    Oracle("fd_elementwise", "elementwise central differences through MLX's own forward (fd_step)",
           ("fd",), ("run", "gate", "validator"), f"{R}:fd_elementwise", rechecks.finite_differences,
           confirms=False),
    Oracle("metamorphic", "the call under its equivalent params (sorted flag off) gives the same gradients",
           ("metamorphic",), ("fuzz", "validator"), f"{R}:metamorphic", rechecks.self_consistent,
           confirms=False),
    Oracle("finite_differences", "v^T J u by one central difference along a random direction (multilinear ops)",
           ("fd_directional",), ("fuzz", "validator"), f"{R}:fd_directional", rechecks.self_consistent,
           confirms=False),
    Oracle("backward_twice", "a second VJP of the same call gives the same gradients",
           ("twice",), ("fuzz", "validator"), f"{R}:backward_twice", rechecks.self_consistent,
           confirms=False),
    Oracle("jvp_consistency", "<J u, v> from mx.jvp equals <u, J^T v> from the VJP",
           ("jvp",), ("fuzz", "validator"), f"{R}:jvp_consistency", rechecks.self_consistent,
           confirms=False),
)

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
