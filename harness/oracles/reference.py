"""reference: every value the float64 reference has (forward, each gradient,
pair loss, H @ 1, no_vjp) against what MLX gave, within the dtype tolerance
(and, in half precision, the accumulation bound of core/checks.py). Its
reproducer is the plain one (cases/reproducer.py: the forward and the VJP)."""
from __future__ import annotations

from ..core import checks
from . import recheck as rc
from .base import Oracle


def measure(t, call) -> list:
    return [checks.compare(k, t.observed[k], t.expected[k], *t.tol(), acc=t.acc.get(k)) for k in t.expected]


def recheck(c: dict, ctx) -> tuple:
    """The value the name names, re-derived from the float64 reference."""
    name = c["name"]
    if name not in ctx.expected:
        return [f"the float64 reference has no value named {name!r}"], dict(c, passed=False)
    return rc.recompute(c, ctx, "reference", ctx.expected[name], rc.accumulation(ctx).get(name))


ORACLE = Oracle("reference", "MLX against the float64 reference: forward, every gradient, loss, H @ 1",
                ("reference",), ("run", "fuzz", "gate", "validator"), measure, recheck, confirms=True,
                first_order=True)
