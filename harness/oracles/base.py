"""What every oracle module is made of: its table row (Oracle), the fragment a
standalone reproducer needs of it (Repro), and what its measuring function is
handed (Trial). Numpy only: the validator imports every oracle module.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core import checks

CONTEXTS = ("run", "fuzz", "gate", "validator")


@dataclass(frozen=True)
class Repro:
    """How a standalone reproducer (cases/reproducer.py) shows a finding of an oracle
    whose findings show only under its transform; its texts are formatted with the
    script's fields (wrt, present, arity, direction, transform, fallback, and `fields`)."""
    # Script text that fills the dict `got` (keys in `want`'s order) from MLX.
    measure: str
    # (s, expected, direction seed) -> ({check name: float64 values}, the direction u or None).
    wanted: Callable
    # Where the transform raised: the plain form that must work for it to be the transform's fault.
    plain: str = ""
    # A comment saying what the expected values are of.
    how: str = ""
    # Its checks record the seed of the direction u (the script takes the same u).
    directed: bool = False
    # More format fields, as (name, text) pairs.
    fields: tuple = ()


@dataclass(frozen=True)
class Oracle:
    # Identity: the name findings and signatures use, and one line for people.
    name: str
    summary: str
    # The `kind` of the checks it makes (unique across rows: a check's kind names its oracle).
    kinds: tuple
    # Contexts that run it; "validator" when its records are re-checked offline.
    where: tuple
    # measure(trial, call) -> [check] on the MLX side; None: measured by running/execute.py
    # itself (the VJP's own exception, recorded as the record's error; an error input's refusal).
    measure: Callable | None
    # How the validator re-derives one of its checks: recheck(check, ctx) -> (reasons, new check).
    recheck: Callable | None
    # Its failure alone makes a finding; the others need a confirming oracle to agree.
    confirms: bool
    # A first-order executor (the native C++ suite) makes its checks too.
    first_order: bool = False
    # gradient(check, wrt) -> which derivative a failed check is about (judging/judge.py);
    # None: the check's name says it ("grad:x" -> "grad-x", a name without ":" as it is).
    gradient: Callable | None = None
    # What a failed value check of it is (a signature's kind), where not "wrong-value"/"shape".
    symptom: str | None = None
    # The reproducer's fragment, for an oracle whose findings show only under its transform.
    repro: Repro | None = None

    def __post_init__(self):
        bad = set(self.where) - set(CONTEXTS)
        if bad:
            raise ValueError(f"oracle {self.name!r}: unknown contexts {sorted(bad)}")
        if ("validator" in self.where) != (self.recheck is not None):
            raise ValueError(f"oracle {self.name!r}: a row re-checked by the validator needs a recheck, "
                             "and only such a row has one")
        if isinstance(self.measure, str):   # a module reached through a name hides an import
            raise ValueError(f"oracle {self.name!r}: measure is the function itself, not a name")

    def runs_in(self, context: str) -> bool:
        return context in self.where


def plain_gradient(name: str) -> str:
    """The derivative a check's name says: "<head>:<operand>[#k]" -> grad-<operand>."""
    head, _, rest = name.partition(":")
    return "grad-" + rest.split("#")[0] if head != name else name


def joint(check: dict, wrt) -> str:
    """A check about every differentiated operand at once (a directional one)."""
    return "+".join(wrt)


@dataclass(frozen=True)
class Trial:
    """What every oracle may look at: the scenario, the reference's expected
    values, the cotangent, and what MLX gave (forward, gradients, and every
    observed value by its check name: forward, grad:*, loss, hvp:*, no_vjp);
    the half-precision accumulation records by check name (cases/expected.py).
    An oracle that does not apply to the call says why in `notes` (the
    record's `not_applicable`); `memo` holds values two oracles share."""
    s: object
    context: str
    expected: dict
    cotangent: np.ndarray
    forward: np.ndarray
    grads: dict
    observed: dict
    seed: int = 0
    acc: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    memo: dict = field(default_factory=dict)

    def note(self, oracle: str, reason: str) -> list:
        """Record that `oracle` does not apply here, and why; no checks."""
        self.notes.append({"oracle": oracle, "reason": str(reason)[:300]})
        return []

    def tol(self, kind: str = "reference") -> tuple:
        return checks.tolerance(self.s.dtype, kind)
