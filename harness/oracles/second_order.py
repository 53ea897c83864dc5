"""second_order: MLX's VJP of its own VJP. For a random direction u (the one
forward mode takes), the gradient of h(x, g) = <u, J(x)^T g> (real pairing) is
H u with respect to the operands (H the Hessian of <g, f>) and J u with respect
to the cotangent; both against the float64 reference (core/references.py hvp
and directional). Needs a hand-written reference VJP to differentiate (within
the stated bound; where it cannot decide, at ties and kinks, no check); status:
second order raises where first order works."""
from __future__ import annotations

from ..core import checks, numeric, references
from . import bridge, directions, transforms
from .base import Oracle, Repro


def measure(t, call) -> list:
    why = transforms.skip(t, "second_order", "second_order")
    if why is None and t.s.dtype in transforms.HALF:
        why = "half precision: no stated bound for second derivatives"
    if why is None and t.s.info.reference_vjp is None:
        why = "no hand-written reference VJP to differentiate again"
    if why:
        return t.note("second_order", why)
    u = directions.second(t)
    try:
        ref_h = references.hvp(t.s, t.cotangent, u)
    except numeric.ReferenceUndecided as e:
        return t.note("second_order", f"reference undecided: {e}")
    ref_j = directions.reference_ju(t, u)
    try:
        got = _mlx_second(t, call, u)
    except Exception as e:
        return [transforms.status("second" + transforms.STATUS, "second_order", e)]
    out = [checks.compare(f"second:{n}", got[i], ref_h[n], *t.tol(), kind="second_order")
           for i, n in enumerate(t.s.wrt)]
    if not isinstance(ref_j, Exception):
        out.append(checks.compare("second:cotangent", got[-1], ref_j, *t.tol(), kind="second_order"))
    return [dict(c, seed=directions.second_seed(t)) for c in out]


def _mlx_second(t, call, u) -> list:
    mx = bridge.mx()
    um = [bridge.like(u[n], p) for n, p in zip(t.s.wrt, call.primals)]

    def h(*args):
        _, grads = mx.vjp(call, list(args[:-1]), [args[-1]])
        total = None
        for d, gr in zip(um, grads):
            term = mx.sum(mx.real(mx.conj(d) * gr)) if mx.issubdtype(gr.dtype, mx.complexfloating) \
                else mx.sum(d * gr)
            total = term if total is None else total + term
        return total
    k = len(call.primals) + 1
    res = mx.grad(h, argnums=list(range(k)))(*call.primals, call.cotangent(t.cotangent))
    mx.eval(res)
    return [bridge.to_numpy(r) for r in res]


def recheck(c: dict, ctx) -> tuple:
    """second:<operand> (H u) and second:cotangent (J u), re-derived along the
    direction of the recorded seed; second:status as a status check."""
    if c["name"] == "second" + transforms.STATUS:
        return transforms.recheck_status(c, "second_order")
    return directions.recheck_along(c, ctx, "second_order", lambda seed: _want(c["name"], ctx, seed))


def _want(name: str, ctx, seed: int):
    if name == "second:cotangent":
        return directions.recheck_ju(ctx, seed)
    operand = name[7:] if name.startswith("second:") else None
    if operand not in ctx.scenario.wrt:
        return None
    g = references.cotangent(ctx.scenario, ctx.expected["forward"])
    hu = directions.recheck_hu(ctx, seed, g)
    return hu if isinstance(hu, Exception) else hu[operand]


def gradient(check: dict, wrt) -> str:
    """second:status -> second-status; second:<operand> -> hvp-<operand> (the cotangent's: J u)."""
    rest = check["name"].partition(":")[2].split("#")[0]
    return "second-" + rest if rest in ("status", "batch") else "hvp-" + rest


def wanted(s, exp: dict, seed: int) -> tuple:
    u = references.direction(s, seed)
    hu = references.hvp(s, references.cotangent(s, exp["forward"]), u)
    want = {f"second:{n}": hu[n] for n in s.wrt}
    try:   # J u where the reference decides it (as the oracle: else no cotangent check)
        want["second:cotangent"] = references.directional(s, u)
    except numeric.ReferenceUndecided:
        pass
    return want, u


REPRO = Repro(
    measure='''u = [{direction}]
h = lambda {wrt}, g: sum(mx.sum(mx.real(mx.conj(d) * x)) for d, x in zip(u, mx.vjp(f, [{wrt}], [g])[1]))   # <u, J^T g>
try:
    mx.eval(got := dict(zip(want, mx.grad(h, argnums=list(range({arity})))({wrt}, g))))
except Exception as e:
{fallback}''',
    wanted=wanted, plain="mx.vjp(f, [{wrt}], [g])", directed=True,
    how="\n# second order: the gradient of <u, J^T g> is H u (the operands) and J u (the cotangent)")

ORACLE = Oracle("second_order", "the VJP of the VJP along a random u: H u and J u against float64 differences of "
                                "the hand-written reference VJP and forward (status: second order raises where "
                                "first order works); eight reference VJPs a call, everywhere",
                ("second_order",), ("run", "fuzz", "gate", "validator"), measure, recheck, confirms=True,
                gradient=gradient, repro=REPRO)
