"""Numerical derivatives along a direction, with an error bound they earn: the one
implementation of finite differences that gradcheck's float64 oracle and the catalog's
difference oracles (oracles/fd_elementwise.py, oracles/finite_differences.py) share.

For F(t) = fn(x + t u) (a flat float64 array), F'(0) is estimated from central
differences D(s) = (F(s) - F(-s)) / 2s at s = h, h/2, h/4, combined by
Richardson extrapolation: R = (64 D(h/4) - 20 D(h/2) + D(h)) / 45, which
cancels the s^2 and s^4 error terms. The stated error of each element is

    max(|R - E|, |R - D(h/4)|)  +  NOISE * eps / h

* the first term, E the s^4-accurate column, bounds the truncation error: the
  last correction made, or the distance to the plain difference at the
  shortest step where that is larger (a kink among the points can make the
  correction small while R is off);
* eps is the evaluation error of one F element (float64.EVAL_ERROR times its
  magnitude): MLX's float64 kernels are only float32-accurate, so this term,
  not float64 rounding, limits how small a step helps. R's weights amplify it
  by at most (64*4 + 20*2 + 1) / 45 / h = NOISE / h.

h starts at H0 (in units of the direction's scale, so a big input gets a big
step) and is cut by 8, at most TRIES times, until two consecutive steps agree
within their stated errors (see derivative).

Kinks: the second difference over the step, b(s) = |F(s) - 2F(0) + F(-s)| / s,
is s |F''| for a smooth F (halving with s) and the jump in slope at a kink (not
shrinking). An element whose b(h/4) > 3/4 b(h/2), above the noise, at some
step, and clearly smooth at no shorter step tried, is `kink`: F is not differentiable there (left and right one-sided
derivatives are returned for the report); it is never compared. So is an element
whose error no step brought below UNRESOLVED of the values' size (a kink closer
than the shortest step: the differences cannot decide), and so is an element where F
jumps between the points: its second difference |F(s) - 2F(0) + F(-s)| above what
noise can make (JUMP evaluation errors) and not shrinking when the step is halved (a
smooth F's shrinks 4-fold, a kink's 2-fold), at any two successive steps: a staircase such as floor at large
values, whose stairs even the shortest step spans, looks smooth to the differences. Where the differences
do not shrink 4-fold per halving (a kink among the steps), the truncation term
is the larger difference itself, not the Richardson correction.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

H0 = 1.0 / 16
TRIES = 4
CUT = 8.0
NOISE = (64 * 4 + 20 * 2 + 1) / 45
JUMP = 4             # a second difference of F above 4 evaluation errors (what noise can make)
UNRESOLVED = 0.05   # a stated error above this fraction of the values' size: not judged


@dataclass
class Estimate:
    value: np.ndarray    # F'(0), elementwise
    err: np.ndarray      # its stated error
    kink: np.ndarray     # bool: not differentiable (one-sided slopes disagree)
    left: np.ndarray     # one-sided slopes at the smallest step, for the report
    right: np.ndarray
    step: float          # the last first-step tried


def central(F, s) -> tuple:
    """(D(s), F(s), F(-s)), D(s) = (F(s) - F(-s)) / 2s: the central difference every
    estimate here is built from. Alone it is exact where F is a polynomial of degree <= 2
    along the step and its points are exact (the catalog's fd_step and multilinear ops:
    oracles/fd_elementwise.py, oracles/finite_differences.py use it so); elsewhere
    `derivative` extrapolates it and bounds the error."""
    plus, minus = F(s), F(-s)
    return (plus - minus) / (2 * s), plus, minus


def _one(F, f0, eps, h) -> tuple:
    d, bends, plus1 = [], [], None
    for s in (h, h / 2, h / 4):
        quotient, plus, minus = central(F, s)
        plus1 = plus1 if plus1 is not None else (plus, minus)
        d.append(quotient)
        bends.append(np.abs(plus - 2 * f0 + minus) / s)
    e2, e3 = d[1] + (d[1] - d[0]) / 3, d[2] + (d[2] - d[1]) / 3
    value = e3 + (e3 - e2) / 15
    # the truncation term: the distance to the shortest step's plain difference, not just
    # the last correction (which a kink among the points can make small while the
    # value is off; the plain difference at h/4 is the estimate least exposed to it)
    trunc, noise = np.maximum(np.abs(value - e3), np.abs(value - d[2])), NOISE * eps / h
    # Richardson presumes D(s) = F' + c s^2 + ...: successive differences shrinking 4-fold.
    # A kink within the steps (or any non-smooth F) breaks that, and |R - E| is then no
    # estimate: the larger first difference stands in for it (so a shorter step is tried).
    d12, d23 = d[0] - d[1], d[1] - d[2]
    irregular = np.abs(d12 - 4 * d23) > 0.25 * np.abs(d12) + 40 * eps / h
    trunc = np.where(irregular, np.maximum(np.abs(d12), np.abs(d23)), trunc)
    s = h / 4
    flat_bend = bends[2] > 0.75 * bends[1]
    visible = bends[2] > 1e-9 * (np.abs(value) + np.mean(np.abs(value)))
    kink = flat_bend & visible & (bends[2] > 8 * 4 * eps / s)
    smooth = ~flat_bend | ~visible   # decisively smooth (else within the noise: no verdict)
    right, left = (plus - f0) / s, (f0 - minus) / s
    # the second differences in F itself, |F(s) - 2F(0) + F(-s)|: F'' s^2 for a smooth F
    # (shrinking 64-fold per step cut), the slope's jump times s at a kink (8-fold), and
    # the height of a jump of F among the points (not shrinking)
    second = [b * t for b, t in zip(bends, (h, h / 2, h / 4))]
    return value, trunc, noise, kink, smooth, left, right, second


def derivative(F, f0: np.ndarray, eps: np.ndarray, h0: float = H0, tries: int = TRIES) -> Estimate:
    """F'(0) elementwise with its bound; F(t) returns a flat array like f0.

    Steps h0, h0/8, ...: an element is decided by the first step whose estimate the next
    shorter step confirms (its error is the smaller, and the shorter step's estimate lies
    within it):
    a single step's error estimate can be fooled (a kink among its points), two steps
    agreeing that closely cannot easily be. An element never decided keeps the last estimate with the
    last two's disagreement added to its error. tries: how many step lengths at most."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        value = err = None
        kink, decided, prev = np.zeros(f0.shape, bool), np.zeros(f0.shape, bool), None
        jump, last = np.zeros(f0.shape, bool), None
        for k in range(tries):
            h = h0 / CUT ** k
            v, trunc, noise, kink_k, smooth, left, right, second = _one(F, f0, eps, h)
            e = np.where(np.isfinite(v), trunc + noise, np.inf)
            kink = (kink | kink_k) & ~smooth if k else kink_k
            for q in second:   # F jumps within the steps: see _one's second differences
                if last is not None:
                    jump |= (q > 0.75 * last) & (q > JUMP * eps)
                last = q
            if prev is None:
                value, err, lr = v, e, (left, right)
            else:
                pv, pe = prev
                gap = np.abs(v - pv)
                # an estimate is taken only where the next shorter step confirms it: it has
                # the smaller stated error and the shorter step's estimate lies within it (a
                # longer step "agreeing" proves nothing: a kink among the points can make one
                # step's estimate wrong with a small error)
                agree = ~decided & (pe <= e) & (gap <= pe)
                keep = decided | agree     # the rest move on to this step, with the gap added
                value, err = np.where(keep, value, v), np.where(keep, err, e + gap)
                decided |= agree
                lr = (np.where(kink_k, left, lr[0]), np.where(kink_k, right, lr[1]))
            prev = (v, e)
            if k and np.all(decided & ~kink):
                break
        # what no step resolved (a kink closer than the shortest step) is not judged either
        # (an error that is mostly the evaluation-noise term is resolution, not a kink)
        floor = 10 * NOISE * eps / h
        loose = (err > UNRESOLVED * (np.abs(value) + np.max(np.abs(value), initial=0.0))) & (err > floor)
        kink = kink | loose | jump
        return Estimate(value, np.where(kink, np.inf, err), kink, lr[0], lr[1], h)
