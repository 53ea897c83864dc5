"""The MLX side of the oracles in judging/oracles.py: measure(trial, call) ->
[check] for each row that runs here. The checks have the results-schema shape
of core/checks.py; their `kind` names the row that made them.

Generic over the op registry: the op record says what applies (exact
arithmetic, multilinearity, equivalent params); nothing here names an op.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..cases import expected
from ..core import checks, numeric, references
from ..judging import rechecks
from . import execute

# "Exactly zero": the smallest positive float64 normal, so checks.compare never
# divides by a zero tolerance, yet any nonzero float32 value fails.
EXACT = 2.2250738585072014e-308
FD_STEP = 0.5   # dyadic, so x +- h u stays exact for the small integer inputs


def _mx():
    import mlx.core as mx
    return mx


def _tol(t, kind="reference") -> tuple:
    return checks.tolerance(t.s.dtype, kind)


def reference(t, call) -> list:
    """Every value the float64 reference has (forward, each gradient, loss, H @ 1,
    no_vjp) against what MLX gave, within the dtype tolerance (and, in half
    precision, the accumulation bound of core/checks.py)."""
    return [checks.compare(k, t.observed[k], t.expected[k], *_tol(t), acc=t.acc.get(k)) for k in t.expected]


def exact_zero(t, call) -> list:
    """Where the op is declared `exact` and runs in float32, exact zeros wherever
    the reference is exactly zero: rows nothing selects and contributions that
    cancel must not pick up even a denormal."""
    if not (t.s.info.exact and t.s.dtype == "float32"):
        return []
    out = []
    for n in t.s.wrt:
        want = np.asarray(t.expected[f"grad:{n}"])
        mask = want == 0
        if mask.any() and t.grads[n].shape == mask.shape:
            with np.errstate(over="ignore"):   # error / tiny tolerance may overflow to inf
                out.append(checks.compare(f"zero:{n}", t.grads[n][mask], want[mask], EXACT, 0.0,
                                          kind="exact_zero"))
    return out


def _objective64(s, y: np.ndarray, g: np.ndarray) -> float:
    """The scalar whose gradient the VJP is, evaluated in float64 from MLX's forward."""
    if s.objective == "pair_loss":
        flat = y.reshape((-1,) + y.shape[-2:])
        return float(0.5 * np.sum((flat[0] - flat[1]) ** 2))
    return numeric.pairing(g, y)


def fd_elementwise(t, call) -> list:
    """Central differences through the actual MLX forward, one element at a time,
    where the scenario asks for them (fd_step): the check's expected values are
    the differences, its observed values MLX's gradient. A complex operand is
    stepped along its real and its imaginary part (MLX's convention: the
    gradient is dL/dRe + i dL/dIm)."""
    s, h = t.s, t.s.fd_step
    if not h or not t.grads:
        return []
    out = []
    for pos, name in enumerate(s.wrt):
        base = execute.to_numpy(call.primals[pos])
        parts = (1.0, 1j) if np.iscomplexobj(base) else (1.0,)
        grad = np.zeros(base.shape, dtype=base.dtype)
        for i in np.ndindex(base.shape):
            for d in parts:
                grad[i] += d * _fd_one(t, call, pos, base, i, d * h) / (2 * h)
        out.append(checks.compare(f"fd:{name}", t.grads[name], grad, *_tol(t, "fd"), kind="fd"))
    return out


def _fd_one(t, call, pos, base, i, step) -> float:
    """objective(x + step e_i) - objective(x - step e_i) through MLX's forward."""
    vals = []
    for sign in (1.0, -1.0):
        bumped = base.copy()
        bumped[i] += sign * step
        args = list(call.primals)
        args[pos] = execute.array(bumped, execute.dtype_name(call.primals[pos]))
        vals.append(_objective64(t.s, execute.to_numpy(call(*args)), t.cotangent))
    return vals[0] - vals[1]


def metamorphic(t, call) -> list:
    """The same call under the op's equivalent params (gather_mm: sorted_indices
    off) must give the same gradients; only where the params differ."""
    alt = {**t.s.params, **t.s.info.equivalent_params}
    if not t.s.info.equivalent_params or alt == t.s.params or not t.grads:
        return []
    try:
        _, other = execute.Call(t.s, params=alt).vjp(t.cotangent)
    except Exception:   # the equivalent call failing is not this call's defect
        return []
    return [checks.compare(f"equivalent:{n}", t.grads[n], other[n], *_tol(t), kind="metamorphic")
            for n in t.s.wrt]


def directions(t) -> dict:
    """The trial's random direction (core/references.py `direction` of its seed)."""
    key = ("direction", t.seed)
    if key not in t.memo:
        t.memo[key] = references.direction(t.s, t.seed)
    return t.memo[key]


def fd_directional(t, call) -> list:
    """Gradcheck's fast mode: central difference of <cot, f(x + h u)> at h=0
    against sum_n <grad_n, u_n>, for one random direction u over all wrt.

    Only for ops declared `multilinear`: along any line they are polynomials of
    degree <= 2, so a central difference with a large dyadic step is exact and
    float32 rounding is all the tolerance absorbs. For other ops a step this
    size measures curvature, not a defect."""
    if not t.s.info.multilinear or not t.grads:
        return []
    u = directions(t)
    if any(np.shape(t.grads[n]) != u[n].shape for n in t.s.wrt):
        return []   # a wrongly shaped gradient has no directional derivative; the reference flags it
    base = [(execute.to_numpy(p), execute.dtype_name(p)) for p in call.primals]
    vals = []
    for sign in (1.0, -1.0):
        args = [execute.array(b + sign * FD_STEP * u[n], dt) for (b, dt), n in zip(base, t.s.wrt)]
        vals.append(numeric.pairing(t.cotangent, execute.to_numpy(call(*args))))
    fd = (vals[0] - vals[1]) / (2 * FD_STEP)
    analytic = sum(numeric.pairing(t.grads[n], u[n]) for n in t.s.wrt)
    return [checks.compare("fd:directional", np.array(analytic), np.array(fd), *_tol(t, "fd"),
                           kind="fd_directional")]


def backward_twice(t, call) -> list:
    """A second VJP must repeat the first. Where it does not, the second result
    is also held against the reference (so nondeterminism that happened to
    match once is still confirmed as a defect)."""
    if not t.grads:
        return []
    try:   # a fresh call: new buffers, so a VJP reading past one shows it
        _, again = execute.Call(t.s).vjp(t.cotangent)
    except Exception as e:
        return [dict(checks.compare("twice:vjp", np.array(0.0), np.array(1.0), 0.0, 0.0, kind="twice"),
                     reason=f"second VJP raised: {type(e).__name__}")]
    out = [checks.compare(f"twice:{n}", again[n], t.grads[n], *_tol(t), kind="twice") for n in t.s.wrt]
    if not all(c["passed"] for c in out):
        out += [checks.compare(f"grad:{n}#2", again[n], t.expected[f"grad:{n}"], *_tol(t)) for n in t.s.wrt]
    return out


def jvp_consistency(t, call) -> list:
    """MLX against itself: <J u, v> from mx.jvp equals <u, J^T v> from the VJP
    (the inner-product identity JAX's check_vjp uses), for a random direction u.
    Ops whose MLX primitives have no JVP give no check."""
    if not t.grads:
        return []
    mx = _mx()
    u = directions(dataclasses.replace(t, seed=t.seed + 1))
    if any(np.shape(t.grads[n]) != u[n].shape for n in t.s.wrt):
        return []
    tangents = [execute.array(u[n], execute.dtype_name(p)) for n, p in zip(t.s.wrt, call.primals)]
    try:
        _, (ju,) = mx.jvp(call, call.primals, tangents)
        mx.eval(ju)
    except Exception:   # no JVP rule: nothing to compare
        return []
    ju = execute.to_numpy(ju)
    if ju.shape != np.shape(t.cotangent):   # a JVP of the wrong shape: the forward_mode oracle reports it
        return [checks.compare("jvp:inner_product", ju, np.asarray(t.cotangent), *_tol(t, "fd"), kind="jvp")]
    forward_side = numeric.pairing(t.cotangent, ju)
    reverse_side = sum(numeric.pairing(t.grads[n], u[n]) for n in t.s.wrt)
    return [checks.compare("jvp:inner_product", np.array(forward_side), np.array(reverse_side),
                           *_tol(t, "fd"), kind="jvp")]


# --- transforms: second order, vmap, compile, forward mode ------------------------------------
#
# Each compares MLX under a transform against the float64 reference of the same
# quantity, so a failure confirms a finding by itself; each applies only where
# the op record says the transform composes with the call (OpInfo.second_order,
# .vmap, .compile), to plain VJPs (objective "vjp") that worked at first order.
# Where one does not apply, the record's `not_applicable` says why.
# An MLX exception under a transform where the plain VJP worked is a status
# check: observed 1 (raised) against expected 0, the exception text kept.

HALF = ("float16", "bfloat16")


def _status(name: str, kind: str, error: BaseException) -> dict:
    """A transform that raised where the plain VJP did not: a failed check."""
    c = checks.compare(name, np.array(1.0), np.array(0.0), 0.0, 0.0, kind=kind)
    return dict(c, error=execute.error_text(error))


def _raised(t, call, oracle: str, error: BaseException, forward_under) -> list:
    """The VJP under a transform raised. Where the transform does not compose with
    the op's forward either (MLX has no vmap rule for the primitive, say), that is
    a missing feature, noted; where the forward composes, the VJP must too: a
    status finding."""
    try:
        _mx().eval(forward_under())
    except Exception as e:
        return t.note(oracle, f"the forward does not compose with {oracle} either: {execute.error_text(e)}")
    return [_status(f"{oracle}:status", oracle, error)]


def _skip(t, oracle: str, flag: str | None) -> str | None:
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


def _transformed(t, call, run, names, kind: str, scale=1.0, suffix="", forward=True) -> list:
    """Checks of what `run` returned under a transform, (forward, *grads), against
    the reference values under those names (gradients scaled by `scale`); the
    forward's own check only where `forward`."""
    out = list(run)
    want = [t.expected["forward"]] + [scale * np.asarray(t.expected[f"grad:{n}"]) for n in t.s.wrt]
    keys = ["forward"] + [f"grad:{n}" for n in t.s.wrt]
    made = []
    for key, got, exp in list(zip(keys, out, want))[0 if forward else 1:]:
        acc = t.acc.get(key)
        if acc and scale != 1.0 and key != "forward":
            acc = dict(acc, magnitude=(abs(scale) * np.asarray(acc["magnitude"])).tolist())
        made.append(checks.compare(f"{names}:{key}{suffix}", got, exp, *_tol(t), kind=kind, acc=acc))
    return made


COMPILE_EVERY = 4   # the fuzzer compiles one case in this many


def compiled(t, call) -> list:
    """mx.compile of the VJP (forward and gradients) against the float64
    reference, on the scenario's own operands and views. In the fuzzer, one case
    in COMPILE_EVERY (by its seed): on the CPU every new fused kernel is a g++ -O3
    build of 2-3 s, and a campaign keeps meeting new ones."""
    why = _skip(t, "compile", "compile")
    if why is None and t.context == "fuzz" and t.seed % COMPILE_EVERY:
        why = f"sampled out (the fuzzer compiles one case in {COMPILE_EVERY})"
    if why:
        return t.note("compile", why)
    mx = _mx()
    fn = lambda *a: _vjp_outputs(call, a)   # noqa: E731
    try:
        res = mx.compile(fn)(*call.primals, call.cotangent(t.cotangent))
        mx.eval(res)
    except Exception as e:
        return _raised(t, call, "compile", e, lambda: mx.compile(call)(*call.primals))
    return _transformed(t, call, [execute.to_numpy(r) for r in res], "compile", "compile")


def _vjp_outputs(call, args):
    mx = _mx()
    (y,), grads = mx.vjp(call, list(args[:-1]), [args[-1]])
    return (y, *grads)


VMAP_SCALE = rechecks.VMAP_SCALE   # example 1's cotangent: -2 g, exact in every dtype


def vmapped(t, call) -> list:
    """mx.vmap of the VJP over a batch of two examples, every differentiated
    operand and the cotangent mapped along a new leading axis: example 0 is the
    scenario, example 1 the same operands with cotangent -2 g. The batch is a
    stacked copy (contiguous): a layout defect is the plain VJP's to show, so a
    vmap failure is about vmap. Each example's gradients against the float64
    reference (example 1's are -2 times example 0's: the VJP is linear in g);
    the forward under vmap is not the VJP's, and is not checked here."""
    why = _skip(t, "vmap", "vmap")
    if why:
        return t.note("vmap", why)
    mx = _mx()
    g = call.cotangent(t.cotangent)
    batch = [mx.stack([p, p]) for p in call.primals]
    cots = mx.stack([g, (VMAP_SCALE * g).astype(g.dtype)])
    try:
        res = mx.vmap(lambda *a: _vjp_outputs(call, a), in_axes=tuple([0] * (len(batch) + 1)))(*batch, cots)
        mx.eval(res)
    except Exception as e:
        return _raised(t, call, "vmap", e, lambda: mx.vmap(call, in_axes=tuple([0] * len(batch)))(*batch))
    res = [execute.to_numpy(r) for r in res]
    if any(r.shape[:1] != (2,) for r in res):
        return [checks.compare("vmap:batch", np.array(res[0].shape), np.array((2,) + res[0].shape[1:]),
                               0.0, 0.0, kind="vmap")]
    return (_transformed(t, call, [r[0] for r in res], "vmap", "vmap", suffix="#0", forward=False)
            + _transformed(t, call, [r[1] for r in res], "vmap", "vmap", VMAP_SCALE, "#1", forward=False))


def _reference_ju(t, u) -> np.ndarray:
    """J u from the reference (shared by forward mode and second order)."""
    if "ju" not in t.memo:
        try:
            t.memo["ju"] = expected.directional(t.s, u)
        except numeric.ReferenceUndecided as e:
            t.memo["ju"] = e
    return t.memo["ju"]


SECOND_SALT = rechecks.SECOND_SALT   # forward mode and second order share one direction


def _second_seed(t) -> int:
    return t.seed + SECOND_SALT


def _second_directions(t) -> dict:
    return directions(dataclasses.replace(t, seed=_second_seed(t)))


def forward_mode(t, call) -> list:
    """mx.jvp (MLX's forward mode) against J u, the float64 directional
    derivative of the reference along a random direction u. Where MLX has no JVP
    rule for a primitive of the call, no check (noted as not applicable): a
    missing rule is not a defect."""
    why = _skip(t, "forward_mode", None)
    if why is None and t.s.dtype in HALF:
        why = "half precision: no stated bound for a derivative MLX takes in another order"
    if why:
        return t.note("forward_mode", why)
    mx, u = _mx(), _second_directions(t)
    ref = _reference_ju(t, u)
    if isinstance(ref, Exception):
        return t.note("forward_mode", f"reference undecided: {ref}")
    tangents = [execute.array(u[n], execute.dtype_name(p)) for n, p in zip(t.s.wrt, call.primals)]
    try:
        _, (ju,) = mx.jvp(call, call.primals, tangents)
        mx.eval(ju)
    except Exception as e:
        return t.note("forward_mode", f"MLX has no JVP here: {execute.error_text(e)}")
    return [dict(checks.compare("jvp:forward", execute.to_numpy(ju), ref, *_tol(t), kind="forward_mode"),
                 seed=_second_seed(t))]


def second_order(t, call) -> list:
    """MLX's VJP of its own VJP: for a random direction u, the gradient of
    h(x, g) = <u, J(x)^T g> (real pairing) is H u with respect to the operands
    (H the Hessian of <g, f>) and J u with respect to the cotangent; both against
    the float64 reference (cases/expected.py hvp and directional). Needs a
    hand-written reference VJP to differentiate (within the stated bound; where
    it cannot decide, at ties and kinks, no check)."""
    why = _skip(t, "second_order", "second_order")
    if why is None and t.s.dtype in HALF:
        why = "half precision: no stated bound for second derivatives"
    if why is None and t.s.info.reference_vjp is None:
        why = "no hand-written reference VJP to differentiate again"
    if why:
        return t.note("second_order", why)
    u = _second_directions(t)
    try:
        ref_h = expected.hvp(t.s, t.cotangent, u)
    except numeric.ReferenceUndecided as e:
        return t.note("second_order", f"reference undecided: {e}")
    ref_j = _reference_ju(t, u)
    try:
        got = _mlx_second(t, call, u)
    except Exception as e:
        return [_status("second:status", "second_order", e)]
    out = [checks.compare(f"second:{n}", got[i], ref_h[n], *_tol(t), kind="second_order")
           for i, n in enumerate(t.s.wrt)]
    if not isinstance(ref_j, Exception):
        out.append(checks.compare("second:cotangent", got[-1], ref_j, *_tol(t), kind="second_order"))
    return [dict(c, seed=_second_seed(t)) for c in out]


def _mlx_second(t, call, u) -> list:
    mx = _mx()
    um = [execute.array(u[n], execute.dtype_name(p)) for n, p in zip(t.s.wrt, call.primals)]

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
    return [execute.to_numpy(r) for r in res]
