"""What the mx.fast ops (rms_norm, layer_norm, rope, sdpa) share: their fuzz
strategies draw float32 only, and the two norms draw the same rows.
"""
from __future__ import annotations

from ...core import draw as D

# float32 only, whatever dtypes the campaign offers: the per-dtype tolerances
# (core/checks.py) fit near-exact arithmetic, and the rounding of these ops'
# nonlinear steps at 8 or 11 mantissa bits (bfloat16, float16) exceeds them
# with no defect in MLX (a bfloat16 weight gradient summing four rounded
# products is off by ~2e-2, above the 1.6e-2 band).
FUZZ_DTYPE = "float32"


def rows(draw, dtype) -> tuple:
    """(shape, x): x of rank 1 to 3, in any layout, normalised along its last
    axis (length 1 to 8)."""
    rank = draw(D.irange(1, 3))
    shape = tuple(draw(D.irange(1, 4)) for _ in range(rank - 1)) + (draw(D.irange(1, 8)),)
    seed = draw(D.irange(0, 2**16))
    x = D.layout(draw, shape[:-2], shape[-2:], seed, dtype) if rank >= 2 else \
        D.tensor(D.hashed_ints(shape, seed), dtype=dtype)
    return shape, x


def affine(draw, n, on, lo, hi, dtype):
    """A weight or bias of length n with values in [lo, hi), or None when the call leaves it out."""
    return D.tensor(D.hashed_ints((n,), draw(D.irange(0, 2**16)), lo, hi), dtype=dtype) if on else None
