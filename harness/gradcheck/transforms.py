"""MLX's derivatives of the problem in one dtype against the float64 oracle's.

Directions: in full mode each element of each leaf (and, for a complex leaf,
i times it), scaled by the element's size; in fast mode a few random
directions per leaf (PyTorch's fast gradcheck: compare projections, not
matrices). For each direction u the oracle's J u comes from numeric.derivative
(shared by every dtype). Then, with v a random cotangent:

* vjp: MLX's J^T v paired with u against <v, J u> of the oracle (in full mode:
  element i of the gradient, directly);
* jvp: MLX's J u against the oracle's, element by element of the outputs;
* identity: <v, J u> from mx.jvp against <J^T v, u> from mx.vjp, in the same
  dtype, for random u over all leaves at once (no oracle: a pure consistency).

Complex values follow MLX's convention, verified on mx.grad: for a cotangent v
the gradient is g = dL/dRe z + i dL/dIm z of L = Re sum(conj(v) * f), so the
derivative of L along u is Re sum(conj(g) * u) (= <g, u> below).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..core import differences as numeric
from ..core.numeric import inner_product_identity, pairing
from .float64 import leaf_dtype, round_to, to_mx, to_np
from .report import Check


pair = pairing   # Re sum(conj(a) * b): MLX's pairing, the catalog's too (core/numeric.py)


def flat(outs: list) -> np.ndarray:
    return np.concatenate([np.ravel(o) for o in outs]) if outs else np.zeros(0)


@dataclass
class Column:
    leaf: int
    index: int        # flat element (full mode) or None (a random direction)
    imag: bool        # the direction is i e_index (a complex leaf's imaginary part)
    u: np.ndarray     # the direction, the leaf's shape
    est: numeric.Estimate


class Setup:
    """What every dtype's check shares: the point, the cotangent, the oracle's columns."""

    def __init__(self, problem, points, complex_flags, oracle, coarse: str, rng, fast: bool, k: int):
        self.problem, self.points, self.complex = problem, points, complex_flags
        self.oracle, self.coarse, self.rng, self.fast = oracle, coarse, rng, fast
        outs = oracle.start(points)
        self.out_paths = list(problem.out_paths)
        self.shapes = [o.shape for o in outs]
        self.f0 = flat(outs)
        self.scales = [_scale(p) for p in points]
        self.eps = self.evaluation_error(outs)
        self.cot = [self.random(o.shape, np.iscomplexobj(o)) for o in outs]
        self.columns = [c for j in range(len(points)) for c in self.directions(j, k)]
        self.rough = self.not_differentiable()
        # the cotangent the vjp and identity checks use: 0 on outputs where fn is not
        # differentiable (each rule's convention there is not judged), the rest judged
        self.cot_judged = [np.where(r.reshape(c.shape), 0, c) for r, c in
                           zip(np.split(self.rough, np.cumsum([c.size for c in self.cot])[:-1]), self.cot)]

    def not_differentiable(self) -> np.ndarray:
        """Per flat output element: fn is not differentiable there. Its value is not finite
        (0/0, a log of 0), or (full mode) the oracle's derivative along random directions
        over all inputs is not the sum of its partial derivatives beyond their bounds: the
        directional derivative is not linear in the direction (ties: sort, max, median of
        equal values, where moving one element at a time shows no kink at all)."""
        rough = ~np.isfinite(self.f0)
        if self.fast or not self.columns:
            return rough
        for _ in range(LINEARITY_PROBES):
            coef = [self.random(p.shape, c) for p, c in zip(self.points, self.complex)]
            u = [r * sc for r, sc in zip(coef, self.scales)]
            def F(t):
                return flat(self.oracle([p + t * d for p, d in zip(self.points, u)])[0])
            est = numeric.derivative(F, self.f0, self.eps)
            sum_cols, err = np.zeros(self.f0.shape, est.value.dtype), est.err.copy()
            for c in self.columns:
                r = coef[c.leaf].reshape(-1)[c.index]
                a = float(np.imag(r) if c.imag else np.real(r))
                sum_cols = sum_cols + a * c.est.value
                err = err + abs(a) * c.est.err
            with np.errstate(invalid="ignore"):
                rough |= est.kink | (np.abs(est.value - sum_cols) > 2 * err + LINEAR_RTOL * (
                    np.abs(est.value) + np.abs(sum_cols)))
        return rough

    def evaluation_error(self, outs: list) -> np.ndarray:
        """One output element's evaluation error: the stated kernel accuracy
        (float64.EVAL_ERROR) times its size plus its output's mean size (an element near 0
        by cancellation is as noisy as its neighbours). A measured level (sixth differences)
        proved unreliable: MLX's float64 kernels are exact at some points and 1e-7 off at
        others, so a sample can see none of it."""
        self.mag = flat([np.abs(o).ravel() + (np.mean(np.abs(o)) if o.size else 0.0) for o in outs])
        self.noise_level = self.oracle.eval_error
        return self.noise_level * self.mag

    def random(self, shape, is_complex: bool) -> np.ndarray:
        x = self.rng.standard_normal(shape)
        if is_complex:
            x = x + 1j * self.rng.standard_normal(shape)
        return round_to(x, self.coarse)

    def directions(self, j: int, k: int) -> list:
        x, sc = self.points[j], self.scales[j]
        if self.fast:
            return [self.column(j, None, False, round_to(self.random(x.shape, self.complex[j]) * sc,
                                                          self.coarse)) for _ in range(k)]
        out = []
        for i in range(x.size):
            for imag in ((False, True) if self.complex[j] else (False,)):
                u = np.zeros(x.shape, complex if imag else float)
                u.reshape(-1)[i] = (1j if imag else 1.0) * sc.reshape(-1)[i]
                out.append(self.column(j, i, imag, u))
        return out

    def column(self, j, i, imag, u) -> Column:
        def F(t):
            pts = list(self.points)
            pts[j] = pts[j] + t * u
            return flat(self.oracle(pts)[0])
        return Column(j, i, imag, u, numeric.derivative(F, self.f0, self.eps))

    def where_out(self, k: int) -> tuple:
        """(output path, index within it) of flat output element k."""
        for path, shape in zip(self.out_paths, self.shapes):
            n = int(np.prod(shape))
            if k < n:
                return path, [int(i) for i in np.unravel_index(k, shape)] if shape else []
            k -= n
        return "out", []


LINEARITY_PROBES = 2   # random directions the Jacobian's linearity is tested along
LINEAR_RTOL = 1e-6     # beyond the stated bounds: two numeric estimates of one number


def _scale(x: np.ndarray) -> np.ndarray:
    """Per element: the size a step is measured in (the element's, or the leaf's rms)."""
    rms = float(np.sqrt(np.mean(np.abs(x) ** 2))) if x.size else 1.0
    return np.maximum(np.abs(x), rms if rms > 0 else 1.0)


class Mlx:
    """MLX's derivatives of the problem with every leaf cast for `dtype`."""

    def __init__(self, setup: Setup, dtype: str):
        import mlx.core as mx
        self.s, self.dtype = setup, dtype
        self.arrays = [to_mx(p, leaf_dtype(c, dtype)) for p, c in zip(setup.points, setup.complex)]
        try:
            outs = setup.problem.call(self.arrays)
            mx.eval(outs)
        except Exception as e:   # fn refuses the dtype: MLX raises various types
            raise ForwardRefused(e) from e
        self.cots = [to_mx(v, _dt(y)) for v, y in zip(setup.cot, outs)]
        self.fn = lambda *a: setup.problem.call(list(a))
        _, g = mx.vjp(self.fn, self.arrays, self.cots)
        self.grads = [to_np(x) for x in g]
        # the gradient for the judged cotangent (outputs where fn is not differentiable left out)
        self.grads_judged = self.grads if not np.any(setup.rough) else [to_np(x) for x in mx.vjp(
            self.fn, self.arrays, [to_mx(v, _dt(y)) for v, y in zip(setup.cot_judged, outs)])[1]]

    def tangent(self, j: int, u) -> list:
        return [to_mx(u if i == j else np.zeros(a.shape), _dt(a)) for i, a in enumerate(self.arrays)]

    def jvp(self, tangents: list) -> np.ndarray:
        import mlx.core as mx
        return flat([to_np(y) for y in mx.jvp(self.fn, self.arrays, tangents)[1]])


def _dt(x) -> str:
    return str(x.dtype).rsplit(".", 1)[-1]


# Unit roundoff of MLX's arithmetic in each dtype (float64: its kernels are float32-accurate).
UNIT = {"float32": 2.0 ** -24, "complex64": 2.0 ** -24, "float64": 2.0 ** -24,
        "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}


def rounding_floor(dtype: str, size):
    """16 u times a size: what rounding in `dtype` leaves of a derivative that is 0 by
    cancellation (at a stationary point, say), for a derivative of f's size per unit x."""
    return 16 * UNIT[dtype] * np.asarray(size, dtype=float)


def judge(got, want, err, kink, tol: tuple, scale=None, floor=0.0) -> tuple:
    """(fail mask, allowed) elementwise: |got - want| <= atol S + rtol |want| + err + floor,
    S the comparison's magnitude, floor the dtype's rounding of a derivative of f's size
    (rounding_floor); kinks and undecided oracle values are not judged."""
    atol, rtol = tol
    got, want = np.asarray(got), np.asarray(want)
    with np.errstate(invalid="ignore", over="ignore"):
        if scale is None:
            scale = max(np.max(np.abs(want), initial=0.0, where=np.isfinite(want)),
                        np.max(np.abs(got), initial=0.0, where=np.isfinite(got)))
        allowed = atol * scale + rtol * np.abs(want) + err + floor
        judged = ~kink & np.isfinite(want) & np.isfinite(err)
        fail = judged & ~(np.abs(got - want) <= allowed)
    return fail, allowed


def _checks(name, dtype, leaf, out, got, want, err, kink, tol, where, left_right=None, scale=None,
            floor=0.0) -> list:
    """The Check records of one comparison: a failure (worst element), else a pass, and a
    not-differentiable note where the oracle found a kink."""
    if np.size(got) != np.size(want):
        return [Check(name, dtype, leaf, out, "fail", detail=f"MLX gives {np.size(got)} elements, "
                      f"the oracle {np.size(want)} (a rule returns the wrong shape)")]
    fail, allowed = judge(got, want, err, kink, tol, scale, floor)
    got, want = np.ravel(got), np.ravel(want)
    out_checks = []
    if np.any(fail):
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(np.ravel(fail), np.abs(got - want) / np.ravel(allowed), -1.0)
        k = int(np.nanargmax(np.where(np.isnan(ratio), np.inf, ratio)))
        o, idx = where(k)
        out_checks.append(Check(name, dtype, leaf, o or out, "fail", idx, _py(got[k]), _py(want[k]),
                                float(np.ravel(allowed)[k]), float(np.ravel(err)[k]), at={"k": k}))
    else:
        out_checks.append(Check(name, dtype, leaf, out, "pass"))
    if np.any(kink):
        k = int(np.argmax(np.ravel(kink)))
        o, idx = where(k)
        detail = "not differentiable here (one-sided differences disagree beyond the bound)"
        if left_right is not None:
            detail += f": left {left_right[0](k):.6g}, right {left_right[1](k):.6g}"
        out_checks.append(Check(name, dtype, leaf, o or out, "not differentiable", idx, detail=detail))
    return out_checks


def unsupported(name: str, dtype: str, e: Exception) -> Check:
    text = str(e).strip().splitlines()[0][:160] if str(e).strip() else ""
    return Check(name, dtype, "all inputs", "all outputs", "unsupported", detail=f"{type(e).__name__}: {text}")


# How MLX says it has no rule (0.32.4): "[Primitive::vmap] Not implemented for X",
# "[scatter] JVP not yet implemented", "GatherQMM::jvp NYI", "[QuantizedMatmul::jvp] No
# JVP wrt the quantized matrix yet."
NO_RULE = re.compile(r"not (yet )?implemented|\bNYI\b|\bno [jv]jp\b[^.]*\byet\b", re.IGNORECASE)


def raised(name: str, dtype: str, e: Exception) -> Check:
    """A derivative that raises where fn itself works (in this dtype): a failure, as in
    PyTorch's and JAX's checkers, except where MLX says it has no rule (NO_RULE): a gap in
    MLX, stated as unsupported, not a wrong value."""
    check = unsupported(name, dtype, e)
    if NO_RULE.search(str(e)):
        return check
    check.status, check.detail = "fail", f"raises where fn itself works: {check.detail}"
    return check


class ForwardRefused(Exception):
    """fn itself raises with its leaves in the checked dtype: that dtype is not checked."""


def _py(x):
    x = complex(x) if np.iscomplexobj(x) else float(x)
    return x


def vjp_checks(m: Mlx, tol) -> list:
    s, out = m.s, []
    for j, path in enumerate(s.problem.paths):
        cols = [c for c in s.columns if c.leaf == j]
        v, grads = flat(s.cot_judged), m.grads_judged
        # outputs whose cotangent is 0 (left out: not differentiable there) weigh nothing
        with np.errstate(invalid="ignore"):
            size = rounding_floor(m.dtype, float(np.sum(np.where(v != 0, np.abs(v) * s.mag, 0))))
            terms = [(pair(v, np.where(v != 0, c.est.value, 0)),
                      float(np.sum(np.where(v != 0, np.abs(v) * c.est.err, 0))),
                      bool(np.any(c.est.kink & (v != 0)))) for c in cols]
        if s.fast:
            got = np.array([pair(grads[j], c.u) for c in cols])
            scale = max(float(np.sum(np.abs(grads[j] * c.u))) + float(np.sum(np.abs(v * c.est.value)))
                        for c in cols) if cols else 0.0
            out += _checks("vjp", m.dtype, path, "all outputs", got, np.array([t[0] for t in terms]),
                           np.array([t[1] for t in terms]), np.array([t[2] for t in terms]), tol,
                           lambda k: ("all outputs", [f"projection {k}"]), scale=scale,
                           floor=size * max(float(np.max(np.abs(c.u) / s.scales[j])) for c in cols))
            continue
        x = s.points[j]
        want = np.zeros(x.size, complex if s.complex[j] else float)
        err, kink = np.zeros(x.size), np.zeros(x.size, bool)
        for c, (w, e, kk) in zip(cols, terms):
            sc = float(s.scales[j].reshape(-1)[c.index])
            want[c.index] += (1j if c.imag else 1.0) * w / sc
            err[c.index] += e / sc
            kink[c.index] |= kk
        # an element whose own direction kinks at an output left out (std of equal values:
        # sqrt at 0), where MLX's gradient is not finite: the rule's 0 * inf there is not judged
        for c in cols:
            if np.any(c.est.kink & s.rough) and not np.isfinite(grads[j].reshape(-1)[c.index]):
                kink[c.index] = True
        shape = x.shape
        checks = _checks("vjp", m.dtype, path, "all outputs", grads[j].reshape(-1), want, err, kink, tol,
                         lambda k: ("all outputs", [int(i) for i in np.unravel_index(k, shape)]),
                         floor=size / s.scales[j].reshape(-1))
        for ch in checks:
            if ch.at is not None:
                ch.at = {"leaf": j, "element": ch.at["k"]}
        out += checks
    return out + rough_note(m, "vjp")


def _badness(ch: Check) -> float:
    """How far a failure is outside its allowance (a wrong shape: infinitely)."""
    if ch.got is None or ch.want is None:
        return np.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        r = abs(ch.got - ch.want) / max(ch.allowed, 1e-300)
    return np.inf if np.isnan(r) else r


def jvp_checks(m: Mlx, tol) -> list:
    """Per leaf: the worst failing direction and the first kink, else a pass."""
    s, out = m.s, []
    for j, path in enumerate(s.problem.paths):
        found = []
        for c in [c for c in s.columns if c.leaf == j]:
            got = m.jvp(m.tangent(j, c.u))
            idx = None if c.index is None else [int(i) for i in np.unravel_index(c.index, s.points[j].shape)]
            checks = _checks("jvp", m.dtype, path, "out", got, c.est.value, c.est.err, c.est.kink | s.rough, tol,
                             s.where_out, (lambda k, c=c: float(np.real(c.est.left[k])),
                                           lambda k, c=c: float(np.real(c.est.right[k]))),
                             floor=rounding_floor(m.dtype, s.mag) * float(np.max(np.abs(c.u) / s.scales[j])))
            for ch in checks:   # the input element is the direction's, the index the output's
                if ch.at is not None and not s.fast:
                    ch.at = {"leaf": j, "element": c.index, "imag": c.imag, "out": ch.at["k"]}
                ch.output = f"{ch.output}{ch.index or ''}"
                ch.index = None if s.fast else (idx + ["imag"] if c.imag else idx)
                if s.fast and ch.status != "pass":
                    ch.detail = (ch.detail + " (along a random direction)").strip()
            found += [ch for ch in checks if ch.status != "pass"]
        fails = [ch for ch in found if ch.status == "fail"]
        kinks = [ch for ch in found if ch.status == "not differentiable"]
        worst = max(fails, key=_badness, default=None)
        out += [worst or Check("jvp", m.dtype, path, "all outputs", "pass")] + kinks[:1]
    return out + rough_note(m, "jvp")




def identity_checks(m: Mlx, tol, k: int) -> list:
    """<v, J u> (mx.jvp) against <J^T v, u> (mx.vjp). Both are rounded results of sums
    whose terms can cancel to near 0; the allowance's magnitude is at least the rounding
    floor 16 u |v| |f| max|u|/rms(x) (u the dtype's unit roundoff): the size of a
    derivative of f's scale, rounded."""
    s = m.s
    v, grads = flat(s.cot_judged), m.grads_judged
    with np.errstate(invalid="ignore"):
        mags = np.where(s.rough, 0.0, np.abs(v) * np.abs(s.f0))
    lhs, rhs, scale = [], [], 0.0
    for _ in range(k):
        us = [s.random(p.shape, c) for p, c in zip(s.points, s.complex)]
        ju = m.jvp([to_mx(u, _dt(a)) for u, a in zip(us, m.arrays)])
        if ju.size != v.size:   # a JVP of the wrong shape (the jvp check names it): no identity
            return [Check("identity <v, J u> = <J^T v, u>", m.dtype, "all inputs", "all outputs", "fail",
                          detail=f"MLX's JVP gives {ju.size} elements, fn {v.size} (a rule returns the wrong shape)")]
        ju = np.where(s.rough, 0, ju)   # outputs where fn is not differentiable: not judged
        left, right = inner_product_identity(v, ju, grads, us)
        lhs.append(left)
        rhs.append(right)
        per_x = max((float(np.max(np.abs(u) / sc)) for u, sc in zip(us, s.scales) if u.size), default=0.0)
        floor = float(rounding_floor(m.dtype, np.sum(mags))) * per_x / tol[0]
        scale = max(scale, floor, float(np.sum(np.abs(v * ju))) + sum(float(np.sum(np.abs(g * u)))
                                                                         for g, u in zip(grads, us)))
    return _checks("identity <v, J u> = <J^T v, u>", m.dtype, "all inputs", "all outputs", np.array(lhs),
                   np.array(rhs), np.zeros(k), np.zeros(k, bool), tol,
                   lambda i: ("all outputs", [f"direction {i}"]), scale=scale) + rough_note(m, "identity <v, J u> = <J^T v, u>")


def rough_note(m: Mlx, name: str) -> list:
    """A not-differentiable note naming the first output left out (Setup.not_differentiable)."""
    s = m.s
    if not np.any(s.rough):
        return []
    k = int(np.argmax(s.rough))
    o, idx = s.where_out(k)
    why = ("the function's value is not finite here" if not np.isfinite(s.f0[k]) else
           "the oracle's derivative along a random direction is not the sum of its partial derivatives")
    return [Check(name, m.dtype, "all inputs", o, "not differentiable", idx,
                  detail=f"not differentiable at {int(np.sum(s.rough))} output element(s) ({why}): "
                         "their cotangent and tangent components are not judged")]
