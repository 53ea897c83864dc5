"""cummin: mx.cummin(a, axis, reverse=..., inclusive=...), MLX's Scan primitive.

The mirror image of cummax (see cummax.py for the maths, the tie policy and
the trimmed exclusive scans): the same reference with the minimum, the same
catalog with every value negated so the running minimum moves where the
running maximum did, and the identity of an exclusive scan is +inf.
"""
from __future__ import annotations

from .cummax import record


def mlx_call(ops, lhs, rhs, sorted_indices, params):
    import mlx.core as mx

    from .cummax import call
    return call(mx, mx.cummin, ops["a"], params)


OPS = (record("min"),)
