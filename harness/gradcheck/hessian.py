"""Order 2 against fn's own second differences: <w, H u> for a few random pairs (u, w).

The order-2 oracle of engine.Second differentiates MLX's float64 VJP, so it inherits
the rule under test: a VJP that is right at the point but built wrongly (full's g * v,
right at v = 1 only) has a float64 VJP just as wrong nearby, and its differences agree
with MLX. This check needs no VJP at all. With v the order-2 cotangent and L(x) =
<v, fn(x)> (MLX's pairing, Re sum conj(v) f), the mixed second derivative

    d/dt d/ds L(x + t u + s w) at 0 = <w, d/dt G(x + t u)>,  G = J^T v (MLX's gradient),

is estimated by nested numeric.derivative calls on fn evaluated in float64: the inner
derivative (along w) is the function the outer one (along u) differentiates, and the
outer's evaluation error is taken as the inner estimate's own stated error (times
INNER_MARGIN, which covers its variation over the outer steps; where an inner estimate
at a step states a larger error the pair is not judged, and the report says so). MLX's
side is the VJP of its gradient function with cotangent w, paired with u.
"""
from __future__ import annotations

import numpy as np

from ..core import differences as numeric
from .float64 import to_mx
from .report import Check
from .transforms import _checks, _dt, flat, pair, rounding_floor

INNER_MARGIN = 4.0
# Both steps start long (in units of the leaves' scale): a second difference divides the
# evaluation error by the step twice, and Richardson extrapolation removes the truncation
# error a long step makes (shorter steps are tried where it cannot).
H0 = 0.5
NAME = "hessian <w, H u> (second differences of fn)"


class Pairs:
    """The oracle's side, shared by every dtype: random pairs over fn's own leaves and the
    nested estimate for each (computed once)."""

    def __init__(self, first_oracle, setup, n_leaves: int, k: int):
        self.n = n_leaves
        s = setup
        x, v = s.points[:n_leaves], s.points[n_leaves:]
        self.pairs, self.want, self.err, self.undecided = [], [], [], []
        for _ in range(k):
            u = [s.random(p.shape, c) * sc for p, c, sc in zip(x, s.complex, s.scales)]
            w = [s.random(p.shape, c) * sc for p, c, sc in zip(x, s.complex, s.scales)]
            value, err, undecided = _mixed(first_oracle, x, v, u, w, s.oracle.eval_error)
            self.pairs.append((u, w))
            self.want.append(value)
            self.err.append(err)
            self.undecided.append(undecided)


def _mixed(oracle, x, v, u, w, rel_eval) -> tuple:
    """(value, stated error, not decided) of d/dt d/ds <v, fn(x + t u + s w)> at 0."""
    vflat = flat(v)

    def L(t, s) -> np.ndarray:
        outs = oracle([p + t * a + s * b for p, a, b in zip(x, u, w)])[0]
        return np.array([pair(vflat, flat(outs))])

    def noise(t) -> np.ndarray:
        outs = oracle([p + t * a for p, a in zip(x, u)])[0]
        f = flat(outs)
        mag = np.abs(f) + (np.mean(np.abs(f)) if f.size else 0.0)
        return np.array([rel_eval * float(np.sum(np.abs(vflat) * mag))])

    def inner(t) -> numeric.Estimate:
        return numeric.derivative(lambda s: L(t, s), L(t, 0.0), noise(t), H0)

    base = inner(0.0)
    eps = INNER_MARGIN * base.err + noise(0.0)

    def outer(t) -> np.ndarray:
        if t == 0.0:
            return base.value
        e = inner(t)
        # an inner estimate rougher than the outer's stated noise is no value at this step:
        # NaN, so numeric.derivative moves on to a shorter outer step (or leaves it undecided)
        return e.value if e.err[0] <= eps[0] else np.array([np.nan])

    if base.kink[0] or not np.isfinite(base.err[0]):
        return float("nan"), float("inf"), True
    est = numeric.derivative(outer, base.value, eps, H0)
    undecided = bool(est.kink[0]) or not np.isfinite(est.err[0]) or not np.isfinite(est.value[0])
    return float(est.value[0]), float(est.err[0]), undecided


def checks(m, pairs: Pairs, tol) -> list:
    """MLX's <u, VJP of its gradient function with cotangent w> against the nested estimate."""
    import mlx.core as mx
    s, n = m.s, pairs.n
    got, want, err, kink, scale = [], [], [], [], 0.0
    outs = s.problem.call(m.arrays)
    for (u, w), value, e, undecided in zip(pairs.pairs, pairs.want, pairs.err, pairs.undecided):
        cots = [to_mx(wj, _dt(y)) for wj, y in zip(w, outs)]
        g = [np.asarray(a.astype(mx.complex64 if a.dtype == mx.complex64 else mx.float32), dtype=np.complex128
                        if a.dtype == mx.complex64 else np.float64) for a in mx.vjp(m.fn, m.arrays, cots)[1][:n]]
        got.append(sum(pair(gj, uj) for gj, uj in zip(g, u)))
        want.append(value)
        err.append(e)
        kink.append(undecided)
        scale = max(scale, sum(float(np.sum(np.abs(gj * uj))) for gj, uj in zip(g, u)), abs(value))
    floor = float(rounding_floor(m.dtype, scale))
    out = _checks(NAME, m.dtype, "all inputs", "all outputs", np.array(got), np.array(want), np.array(err),
                  np.array(kink), tol, lambda i: ("all outputs", [f"pair {i}"]), scale=scale, floor=floor)
    for ch in out:
        if ch.status == "not differentiable":
            ch.detail = ("not judged: the nested differences could not bound the second derivative here "
                         "(a kink near the point, or an inner estimate too rough)")
    return out


def unsupported(dtype: str, e: Exception) -> Check:
    from .transforms import unsupported as u
    return u(NAME, dtype, e)
