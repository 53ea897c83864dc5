"""The one judging policy: from a call's checks and error to its status, its
failures in priority order, whether they are confirmed, and the signature a
finding is filed under. `run`, the fuzzer, the gate and the validator all
call `judge`; nothing else decides a verdict.

Status: crashed if the process died, error if MLX raised (or nothing was
checked), else pass iff every check passed. Failures: one per failed check
(its oracle from the check's kind) plus one for the error, ordered by the
oracle table, with a forward that disagrees first (a VJP error is then a
consequence). A failure is confirmed only when a confirming oracle made it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .. import oracles
from ..core import verdict
from ..oracles.base import plain_gradient

DIED = re.compile(r"^process died during the (\w+) stage \(([^)]*)\)")


@dataclass(frozen=True)
class Judgement:
    status: str
    failures: tuple          # dicts: oracle, gradient, kind, check

    @property
    def confirmed(self) -> bool:
        names = oracles.confirming()
        return any(f["oracle"] in names for f in self.failures)

    @property
    def primary(self) -> dict | None:
        return self.failures[0] if self.failures else None


def error_kind(error: str) -> str:
    """Exception type plus the '[function]' tag MLX puts first in its messages;
    for a process that died, how and in which stage."""
    died = DIED.match(error)
    if died:
        stage, how = died.groups()
        return f"crash-{how.replace(' ', '-')}" + ("" if stage == "vjp" else f"-in-{stage}")
    head, _, message = error.partition(":")
    tag = re.match(r"\s*\[([^\]]+)\]", message)
    return f"exception-{head.strip()}" + (f"-{tag.group(1)}" if tag else "")


def _value_kind(check: dict, row) -> str:
    if check.get("error"):   # a transform that raised where the plain VJP worked
        return error_kind(check["error"])
    if row is not None and row.symptom:
        return row.symptom
    if check.get("observed_shape") != check.get("expected_shape"):
        return "shape"
    # Non-finite values count as wrong values: garbage read from outside an
    # operand is sometimes NaN and sometimes not, and must not split a class.
    return "wrong-value"


def _gradient(check: dict, row, wrt) -> str:
    """Which derivative a failed check is about, as its oracle reads its names:
    forward, grad-<operand>, the second-order ones (hvp-<operand>, hvp-cotangent),
    jvp, a transform's status, or the joint one."""
    if row is not None and row.gradient is not None:
        return row.gradient(check, wrt)
    return plain_gradient(check["name"])


def failures(s, checks: list, error: str | None) -> tuple:
    out = []
    if error is not None:
        out.append({"oracle": "vjp_exception", "gradient": "vjp", "kind": error_kind(error), "check": None})
    for row, c in oracles.failed(checks):
        out.append({"oracle": row.name if row else "unknown", "gradient": _gradient(c, row, s.wrt),
                    "kind": _value_kind(c, row), "check": c["name"]})
    rank = {o: i for i, o in enumerate(oracles.names())}
    return tuple(sorted(out, key=lambda f: (f["check"] != "forward", rank.get(f["oracle"], len(rank)))))


def judge(s, checks: list, error: str | None = None, crashed: bool = False) -> Judgement:
    """The verdict on one call of scenario `s` (bound), from what was measured."""
    return Judgement(verdict.status(checks, error, crashed=crashed), failures(s, checks, error))


VIEW_NAMES = {"slice": "slice", "transpose": "transposed", "reshape": "reshaped",
              "broadcast_to": "broadcast", "expand_dims": "expanded"}


def features(s) -> tuple:
    """What sets a counterexample apart from the plain call, in a fixed order: its
    dtype when not float32 (complex64 included), a rank-0 or zero-size
    differentiated operand, and the kinds of view its floating operands are
    given through (a strided window is a slice). () for a plain float32 call."""
    out = [] if s.dtype == "float32" else [s.dtype]
    diff = [s.operands[n] for n in s.wrt if n in s.operands]
    if any(len(t.shape) == 0 for t in diff):
        out.append("rank0")
    if any(0 in tuple(t.shape) for t in s.operands.values()):
        out.append("empty")
    ints = set(s.info.integer_operands) if s.info is not None else set()
    views = {v.get("op") for n, t in s.operands.items() if n not in ints for v in t.views}
    out += [VIEW_NAMES[v] for v in VIEW_NAMES if v in views]
    return tuple(out)


def signature(s, failure: dict) -> str:
    """op, which gradient, which oracle, kind of error, the call form, and the
    counterexample's features.

    Wrong values keep the call form (the scenario's family: which index array,
    sorted flag in effect, left broadcasting), which is what separates the
    report's defect classes, and its features (dtype, rank-0, zero-size, views:
    `features`), which separate two defects of one op that show only in
    different corners; a plain float32 call adds nothing, so the report's
    classes keep their five-part names. An exception is named by its type and
    MLX's '[function]' tag alone, since the same failing site shows up under
    many forms (a transform's status check that raised as well)."""
    raised = failure["oracle"] == "vjp_exception" or failure["kind"].startswith(("exception-", "crash-"))
    form = "any" if raised else (s.family or "plain")
    parts = [s.op, failure["gradient"], failure["oracle"], failure["kind"], form]
    extra = () if raised else features(s)
    if extra:
        parts.append("+".join(extra))
    return "__".join(re.sub(r"[^A-Za-z0-9_.+-]", "-", p) for p in parts)


def coarse(sig: str) -> str:
    """A signature without its features: the five parts every finding has."""
    return "__".join(sig.split("__")[:5])


def covered(sig: str, known) -> bool:
    """Whether a known finding already accounts for `sig`: same five parts, and its
    features a subset of sig's (the known defect shows in a plainer call; a
    call that adds a corner to it is the same defect until shown otherwise)."""
    head, feats = coarse(sig), set(features_of(sig))
    return any(coarse(k) == head and set(features_of(k)) <= feats for k in known)


def features_of(sig: str) -> tuple:
    parts = sig.split("__")
    return tuple(parts[5].split("+")) if len(parts) > 5 and parts[5] else ()
