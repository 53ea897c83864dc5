"""backward_twice: a second VJP of the same call (a fresh call: new buffers, so
a VJP reading past one shows it) must repeat the first. Where it does not, the
second result is also held against the reference (grad:<operand>#2, a repeat
measurement the validator re-checks by the reference's rule), so
nondeterminism that happened to match once is still confirmed as a defect."""
from __future__ import annotations

import numpy as np

from ..core import checks
from . import bridge, recheck
from .base import Oracle, joint, plain_gradient


def measure(t, call) -> list:
    if not t.grads:
        return []
    try:
        _, again = bridge.Call(t.s).vjp(t.cotangent)
    except Exception as e:
        return [dict(checks.compare("twice:vjp", np.array(0.0), np.array(1.0), 0.0, 0.0, kind="twice"),
                     reason=f"second VJP raised: {type(e).__name__}")]
    out = [checks.compare(f"twice:{n}", again[n], t.grads[n], *t.tol(), kind="twice") for n in t.s.wrt]
    if not all(c["passed"] for c in out):
        # held to the reference's rule, its half-precision accumulation term included (the
        # validator re-checks the repeat by that rule)
        out += [checks.compare(f"grad:{n}#2", again[n], t.expected[f"grad:{n}"], *t.tol(), acc=t.acc.get(f"grad:{n}"))
                for n in t.s.wrt]
    return out


def gradient(check: dict, wrt) -> str:
    """twice:vjp (the second VJP raised) is about every operand; twice:<operand> its own."""
    return joint(check, wrt) if check["name"] == "twice:vjp" else plain_gradient(check["name"])


ORACLE = Oracle("backward_twice", "a second VJP of the same call gives the same gradients",
                ("twice",), ("fuzz", "validator"), measure, recheck.self_consistent, confirms=False,
                gradient=gradient)
