"""What the transform oracles (compile, vmap, second order, forward mode) share.

Each compares MLX under a transform against the float64 reference of the same
quantity, so a failure confirms a finding by itself; each applies only where
the op record says the transform composes with the call (OpInfo.second_order,
.vmap, .compile), to plain VJPs (objective "vjp") that worked at first order.
Where one does not apply, the record's `not_applicable` says why.
An MLX exception under a transform where the plain VJP worked is a status
check: observed 1 (raised) against expected 0, the exception text kept; the
validator re-derives it with `recheck_status`.
"""
from __future__ import annotations

import numpy as np

from ..core import checks
from . import bridge, recheck

HALF = ("float16", "bfloat16")
STATUS = ":status"   # a transform that raised: observed 1 against expected 0


def status(name: str, kind: str, error: BaseException) -> dict:
    """A transform that raised where the plain VJP did not: a failed check."""
    c = checks.compare(name, np.array(1.0), np.array(0.0), 0.0, 0.0, kind=kind)
    return dict(c, error=bridge.error_text(error))


def raised(t, oracle: str, error: BaseException, forward_under) -> list:
    """The VJP under a transform raised. Where the transform does not compose with
    the op's forward either (MLX has no vmap rule for the primitive, say), that is
    a missing feature, noted; where the forward composes, the VJP must too: a
    status finding."""
    try:
        bridge.mx().eval(forward_under())
    except Exception as e:
        return t.note(oracle, f"the forward does not compose with {oracle} either: {bridge.error_text(e)}")
    return [status(f"{oracle}{STATUS}", oracle, error)]


def skip(t, oracle: str, flag: str | None) -> str | None:
    """Why a transform oracle does not apply to this trial (None: it does)."""
    if not t.grads:
        return "no first-order gradients to transform"
    if t.s.objective != "vjp":
        return f"objective {t.s.objective!r}: the transforms are checked on plain VJPs"
    if flag is not None and not getattr(t.s.info, flag):
        return f"the op record says {flag} does not compose with this op"
    if any(np.shape(t.grads[n]) != np.shape(t.expected[f"grad:{n}"]) for n in t.s.wrt):
        return "a gradient has the wrong shape (the reference check reports it)"
    return None


def scaled(acc, scale: float):
    """An accumulation record of a value scaled by `scale` (its magnitudes too)."""
    if acc and scale != 1.0:
        return dict(acc, magnitude=(abs(scale) * np.asarray(acc["magnitude"])).tolist())
    return acc


def compared(t, run, names, kind: str, scale=1.0, suffix="", forward=True) -> list:
    """Checks of what `run` returned under a transform, (forward, *grads), against
    the reference values under those names (gradients scaled by `scale`); the
    forward's own check only where `forward`."""
    want = [t.expected["forward"]] + [scale * np.asarray(t.expected[f"grad:{n}"]) for n in t.s.wrt]
    keys = ["forward"] + [f"grad:{n}" for n in t.s.wrt]
    made = []
    for key, got, exp in list(zip(keys, list(run), want))[0 if forward else 1:]:
        acc = scaled(t.acc.get(key), 1.0 if key == "forward" else scale)
        made.append(checks.compare(f"{names}:{key}{suffix}", got, exp, *t.tol(), kind=kind, acc=acc))
    return made


def recheck_status(c: dict, kind: str) -> tuple:
    """A transform that raised: observed 1 against expected 0, with the exception kept."""
    want = checks.compare(c["name"], np.array(1.0), np.array(0.0), 0.0, 0.0, kind=kind)
    reasons = recheck.kind_problems(c, kind) + recheck.verdict_matches(c, want)
    if not isinstance(c.get("error"), str) or not c["error"]:
        reasons.append("a status check without the exception text")
    return reasons, dict(want, error=c.get("error"))


def recheck_values(c: dict, ctx, kind: str, scales: dict) -> tuple:
    """<kind>:<value><suffix>: the reference value the name names, a gradient times
    scales[suffix] (the forward is the same under every suffix)."""
    head, _, rest = c["name"].partition(":")
    if head == kind and rest == "status":
        return recheck_status(c, kind)
    key, sep, example = rest.partition("#")
    if head != kind or key not in ctx.expected or sep + example not in scales:
        return [f"{c['name']!r} names no reference value"], dict(c, passed=False)
    scale = 1.0 if key == "forward" else scales[sep + example]
    acc = scaled(recheck.accumulation(ctx).get(key), scale)
    return recheck.recompute(c, ctx, kind, scale * np.asarray(ctx.expected[key]), acc)


def gradient(check: dict, wrt) -> str:
    """compile:<value>, vmap:<value>#k: the value's own derivative; a status or a
    missing batch axis: <transform>-status, <transform>-batch."""
    head, _, rest = check["name"].partition(":")
    rest = rest.split("#")[0]
    if rest == "forward":
        return "forward"
    if rest.startswith("grad:"):
        return "grad-" + rest[5:]
    if rest in ("status", "batch"):
        return head + "-" + rest
    return "grad-" + rest
