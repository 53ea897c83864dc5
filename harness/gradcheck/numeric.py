"""Derivatives of the oracle along a direction, with an error bound they earn.

For F(t) = fn(x + t u) (a flat float64 array), F'(0) is estimated from central
differences D(s) = (F(s) - F(-s)) / 2s at s = h, h/2, h/4, combined by
Richardson extrapolation: R = (64 D(h/4) - 20 D(h/2) + D(h)) / 45, which
cancels the s^2 and s^4 error terms. The stated error of each element is

    |R - E|  +  NOISE * eps / h

* |R - E|, E the s^4-accurate column, estimates the truncation error (it is
  the size of the last correction made);
* eps is the evaluation error of one F element (float64.EVAL_ERROR times its
  magnitude): MLX's float64 kernels are only float32-accurate, so this term,
  not float64 rounding, limits how small a step helps. R's weights amplify it
  by at most (64*4 + 20*2 + 1) / 45 / h = NOISE / h.

h starts at H0 (in units of the direction's scale, so a big input gets a big
step) and is cut by 8 while the truncation term exceeds twice the noise term
or a kink shows, at most TRIES times; per element the smallest bound wins.

Kinks: the second difference over the step, b(s) = |F(s) - 2F(0) + F(-s)| / s,
is s |F''| for a smooth F (halving with s) and the jump in slope at a kink (not
shrinking). An element whose b(h/4) > 3/4 b(h/2), above the noise, at some
step, and clearly smooth at no shorter step tried, is `kink`: F is not differentiable there (left and right one-sided
derivatives are returned for the report); it is never compared.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

H0 = 1.0 / 16
TRIES = 4
CUT = 8.0
NOISE = (64 * 4 + 20 * 2 + 1) / 45


@dataclass
class Estimate:
    value: np.ndarray    # F'(0), elementwise
    err: np.ndarray      # its stated error
    kink: np.ndarray     # bool: not differentiable (one-sided slopes disagree)
    left: np.ndarray     # one-sided slopes at the smallest step, for the report
    right: np.ndarray
    step: float          # the last first-step tried


def _one(F, f0, eps, h) -> tuple:
    d, bends, plus1 = [], [], None
    for s in (h, h / 2, h / 4):
        plus, minus = F(s), F(-s)
        plus1 = plus1 if plus1 is not None else (plus, minus)
        d.append((plus - minus) / (2 * s))
        bends.append(np.abs(plus - 2 * f0 + minus) / s)
    e2, e3 = d[1] + (d[1] - d[0]) / 3, d[2] + (d[2] - d[1]) / 3
    value = e3 + (e3 - e2) / 15
    trunc, noise = np.abs(value - e3), NOISE * eps / h
    s = h / 4
    flat_bend = bends[2] > 0.75 * bends[1]
    visible = bends[2] > 1e-9 * (np.abs(value) + np.mean(np.abs(value)))
    kink = flat_bend & visible & (bends[2] > 8 * 4 * eps / s)
    smooth = ~flat_bend | ~visible   # decisively smooth (else within the noise: no verdict)
    right, left = (plus - f0) / s, (f0 - minus) / s
    return value, trunc, noise, kink, smooth, left, right


def derivative(F, f0: np.ndarray, eps: np.ndarray, h0: float = H0) -> Estimate:
    """F'(0) elementwise with its bound; F(t) returns a flat array like f0."""
    best = None
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for k in range(TRIES):
            h = h0 / CUT ** k
            value, trunc, noise, kink, smooth, left, right = _one(F, f0, eps, h)
            err = np.where(np.isfinite(value), trunc + noise, np.inf)
            if best is None:
                best = Estimate(value, np.where(kink, np.inf, err), kink, left, right, h)
            else:   # a kink seen at a longer step stands unless a shorter one is clearly smooth
                better = ~kink & (err < best.err)
                best = Estimate(np.where(better, value, best.value), np.where(better, err, best.err),
                                (best.kink | kink) & ~smooth, np.where(kink, left, best.left),
                                np.where(kink, right, best.right), h)
            if not np.any(best.kink | (best.err > 3 * noise)):
                break
    return best
