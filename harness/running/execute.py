"""Run one scenario through MLX and check it against the float64 references.

Generic over the op registry: nothing here names an op. The only module of the
running stage that imports mlx (lazily: `_mx()`), besides the op modules' calls.
"""
from __future__ import annotations

import time

import numpy as np

from .. import ops
from ..cases import expected
from ..core import checks, layout, numeric, opinfo, verdict

MX_DTYPES = ("float32", "float16", "bfloat16", "float64")


def _mx():
    import mlx.core as mx
    return mx


def to_mlx(t, dtype=None):
    """Evaluated storage first, then the views: MLX gets a real view onto it."""
    mx = _mx()
    store = mx.array(layout.storage(t, np.float64).astype(np.float32),
                     dtype=getattr(mx, dtype or t.dtype))
    mx.eval(store)
    for view in t.views:
        store = layout.apply_view(store, view, xp=mx)
    return store


def to_numpy(x) -> np.ndarray:
    mx = _mx()
    if x.dtype in (mx.bfloat16, mx.float16):
        x = x.astype(mx.float32)
    return np.array(x, dtype=np.float64)


class Call:
    """The scenario's MLX call as a function of its differentiated operands."""

    def __init__(self, s):
        mx = _mx()
        self.s, self.info = s, ops.get(s.op)
        self.fn = opinfo.resolve(self.info.mlx_call)
        idx = lambda t: None if t is None else mx.array(layout.logical(t, np.int64).astype(np.uint32))  # noqa: E731
        self.lhs, self.rhs = idx(s.lhs_indices), idx(s.rhs_indices)
        self.operands = {n: (layout.logical(t, np.int64) if n in self.info.integer_operands
                             else to_mlx(t)) for n, t in s.operands.items()}
        self.primals = [self.operands[n] for n in s.wrt]

    def __call__(self, *diff):
        ops = dict(self.operands, **dict(zip(self.s.wrt, diff)))
        return self.fn(ops, self.lhs, self.rhs, self.s.sorted_indices, self.s.params)

    def pair_loss(self, *diff):
        y = self(*diff)
        y = y.reshape((-1,) + tuple(y.shape[-2:]))
        return 0.5 * ((y[0] - y[1]) ** 2).sum()


def _objective64(s, y: np.ndarray, g: np.ndarray) -> float:
    """The scalar whose gradient the VJP is, evaluated in float64 from MLX's forward."""
    if s.objective == "pair_loss":
        flat = y.reshape((-1,) + y.shape[-2:])
        return float(0.5 * np.sum((flat[0] - flat[1]) ** 2))
    return float(np.sum(g * y))


def finite_differences(call, s, g: np.ndarray) -> dict:
    """Central differences through the actual MLX forward, one element at a time."""
    mx, h = _mx(), s.fd_step
    out = {}
    for pos, name in enumerate(s.wrt):
        base = to_numpy(call.primals[pos]).astype(np.float32)
        grad = np.zeros(base.shape)
        for i in np.ndindex(base.shape):
            vals = []
            for sign in (1.0, -1.0):
                bumped = base.copy()
                bumped[i] += np.float32(sign * h)
                args = list(call.primals)
                args[pos] = mx.array(bumped, dtype=call.primals[pos].dtype)
                vals.append(_objective64(s, to_numpy(call(*args)), g))
            grad[i] = (vals[0] - vals[1]) / (2 * h)
        out[f"fd:{name}"] = grad
    return out


def _observe_without_vjp(call, y) -> dict:
    """An op MLX gives no VJP: the forward, and whether asking for a VJP raises."""
    mx = _mx()
    try:
        _, grads = mx.vjp(call, call.primals, [mx.ones(y.shape, dtype=y.dtype)])
        mx.eval(grads)
        raised = 0.0
    except Exception:
        raised = 1.0
    return {"forward": to_numpy(y), expected.NO_VJP: np.array(raised)}


def observe(s, expected_cotangent: np.ndarray) -> dict:
    mx = _mx()
    call = Call(s)
    if not call.info.has_vjp:
        return _observe_without_vjp(call, call(*call.primals))
    obs = {}
    if s.objective == "pair_loss":
        loss, grads = mx.value_and_grad(call.pair_loss, argnums=list(range(len(s.wrt))))(*call.primals)
        grads = grads if isinstance(grads, (list, tuple)) else (grads,)
        y = call(*call.primals)
        obs["loss"] = to_numpy(loss)
        first = lambda *a: mx.value_and_grad(call.pair_loss, argnums=0)(*a)[1]  # noqa: E731
        hvp = mx.grad(lambda *a: first(*a).sum(), argnums=0)(*call.primals)
        obs[f"hvp:{s.wrt[0]}"] = to_numpy(hvp)
    else:
        cot = mx.array(expected_cotangent.astype(np.float32), dtype=getattr(mx, ops.dtype_of(s)))
        (y,), grads = mx.vjp(call, call.primals, [cot])
    obs["forward"] = to_numpy(y)
    obs.update({f"grad:{n}": to_numpy(g) for n, g in zip(s.wrt, grads)})
    if s.fd_step:
        obs.update(finite_differences(call, s, expected_cotangent))
    return obs


def check_all(s, exp: dict, obs: dict) -> list:
    dtype = ops.dtype_of(s)
    out = [checks.compare(k, obs[k], exp[k], *checks.tolerance(dtype)) for k in exp]
    for name in s.wrt if s.fd_step else ():
        out.append(checks.compare(f"fd:{name}", obs[f"grad:{name}"], obs[f"fd:{name}"],
                                  *checks.tolerance(dtype, "fd"), kind="fd"))
    return out


def run(s, device: str) -> dict:
    """One scenario on the current default device -> a results record."""
    t0 = time.perf_counter()
    rec = {"scenario": s.name, "device": device, "checks": [], "error": None}
    try:
        exp = expected.expected(s)
    except numeric.ReferenceUndecided as e:   # the reference cannot judge: say so, run nothing
        rec.update(error=f"reference undecided: {e}"[:500], status="error",
                   seconds=round(time.perf_counter() - t0, 6))
        return rec
    try:
        obs = observe(s, expected.cotangent(s, exp["forward"]))
        rec["checks"] = check_all(s, exp, obs)
        rec["fd"] = {k: v.tolist() for k, v in obs.items() if k.startswith("fd:")}
    except Exception as e:  # an MLX exception is a result (status "error"), not a harness bug
        rec["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:500]
    rec["status"] = verdict.status(rec["checks"], rec["error"])
    rec["seconds"] = round(time.perf_counter() - t0, 6)
    return rec
