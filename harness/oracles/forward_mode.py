"""forward_mode: mx.jvp (MLX's forward mode) against J u, the float64
directional derivative of the reference along a random direction u (the one
second order takes). Where MLX has no JVP rule for a primitive of the call, no
check (noted as not applicable): a missing rule is not a defect."""
from __future__ import annotations

from ..core import checks, references
from . import bridge, directions, transforms
from .base import Oracle, Repro, joint


def measure(t, call) -> list:
    why = transforms.skip(t, "forward_mode", None)
    if why is None and t.s.dtype in transforms.HALF:
        why = "half precision: no stated bound for a derivative MLX takes in another order"
    if why:
        return t.note("forward_mode", why)
    mx, u = bridge.mx(), directions.second(t)
    ref = directions.reference_ju(t, u)
    if isinstance(ref, Exception):
        return t.note("forward_mode", f"reference undecided: {ref}")
    tangents = [bridge.like(u[n], p) for n, p in zip(t.s.wrt, call.primals)]
    try:
        _, (ju,) = mx.jvp(call, call.primals, tangents)
        mx.eval(ju)
    except Exception as e:
        return t.note("forward_mode", f"MLX has no JVP here: {bridge.error_text(e)}")
    return [dict(checks.compare("jvp:forward", bridge.to_numpy(ju), ref, *t.tol(), kind="forward_mode"),
                 seed=directions.second_seed(t))]


def recheck(c: dict, ctx) -> tuple:
    """jvp:forward (J u), re-derived along the direction of the recorded seed."""
    want = lambda seed: directions.recheck_ju(ctx, seed) if c["name"] == "jvp:forward" else None  # noqa: E731
    return directions.recheck_along(c, ctx, "forward_mode", want)


def gradient(check: dict, wrt) -> str:
    return "jvp" if check["name"] == "jvp:forward" else joint(check, wrt)


def wanted(s, exp: dict, seed: int) -> tuple:
    u = references.direction(s, seed)
    return {"jvp:forward": references.directional(s, u)}, u


REPRO = Repro(
    measure='''u = [{direction}]
try:
    (y,), (ju,) = mx.jvp(f, [{wrt}], u)
    mx.eval(got := {{"jvp:forward": ju}})
except Exception as e:
    sys.exit(print("cannot test: MLX has no JVP here:", e) or 125)
''',
    wanted=wanted, how="\n# forward mode: mx.jvp along u gives J u", directed=True)

ORACLE = Oracle("forward_mode", "mx.jvp along a random u against the float64 directional derivative of the "
                                "reference (no JVP rule in MLX: not applicable, noted); eight forwards, everywhere",
                ("forward_mode",), ("run", "fuzz", "gate", "validator"), measure, recheck, confirms=True,
                gradient=gradient, repro=REPRO)
