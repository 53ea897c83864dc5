"""Values for an API entry's arguments: numpy arrays (float64 for the differentiated
ones, so the float64 oracle and every lower dtype start from the same numbers),
drawn inside each argument's domain, away from its edges and from the kinks a
generic point must avoid; the corners (sweep/corners.py) move them onto edges on
purpose."""
from __future__ import annotations

import numpy as np

from . import api


def _real(rng, shape):
    # Generic: magnitudes 0.25-1.25 with random signs, so no value sits at 0 or at a tie.
    mag = rng.uniform(0.25, 1.25, size=shape)
    return mag * rng.choice((-1.0, 1.0), size=shape)


def draw(arg: api.Arg, rng: np.random.Generator, shape=None) -> np.ndarray:
    shape = arg.shape if shape is None else shape
    d = arg.domain
    if arg.dtype == "bool":
        return rng.random(shape) < 0.5
    if d == api.INDEX:
        if arg.dtype == "uint32" and arg.bound >= 2**31:   # packed quantized codes: any word
            return rng.integers(0, 2**32, size=shape, dtype=np.uint64).astype(np.uint32)
        if arg.dtype == "uint32":   # sorted segment bounds (segmented_mm)
            return np.sort(rng.integers(0, arg.bound, size=shape), axis=-1).astype(np.uint32)
        return rng.integers(0, arg.bound, size=shape).astype(np.int32)
    if d == api.POSITIVE:
        return rng.uniform(0.5, 2.0, size=shape)
    if d == api.UNIT:
        return rng.uniform(0.1, 0.8, size=shape) * rng.choice((-1.0, 1.0), size=shape)
    if d == api.ABOVE_ONE:
        return rng.uniform(1.5, 3.0, size=shape)
    if d == api.SIMPLEX:
        w = rng.uniform(0.15, 0.85, size=shape)
        return w / w.sum(axis=-1, keepdims=True) if w.size else w
    if d == api.PROB:
        return rng.uniform(0.15, 0.85, size=shape)
    return _real(rng, shape)   # REAL, NONZERO (|x| >= 0.25 already), SPD (made in the call)
