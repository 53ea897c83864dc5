"""Casting between NumPy float64 and MLX dtypes, and fn evaluated as the oracle.

The oracle is fn itself run on the CPU with every differentiable leaf in
float64. Two things can stop it being float64 throughout, and both are
reported, never hidden: a complex leaf (MLX has no complex128, so it stays
complex64), and an op that refuses float64 or returns a lower precision (the
FFTs give complex64): the oracle then runs with float32 leaves and its
evaluation error is stated at float32 level (see EVAL_ERROR).
"""
from __future__ import annotations

import numpy as np

# Relative error of one evaluation of fn, per output element, that the oracle's
# bound assumes. float64: MLX's float64 sin/cos/exp/sigmoid/softmax/logaddexp
# kernels are only float32-accurate (relative error up to 7e-7, erf 2e-6,
# piecewise constant over ~1e-7 of the input), so 2e-6 rather than 1e-16.
# float32: rounding of a chain of float32 ops with the same kernels.
EVAL_ERROR = {"float64": 2e-6, "float32": 2e-5}


def mx_dtype(name: str):
    import mlx.core as mx
    return getattr(mx, name)


def to_mx(value: np.ndarray, dtype: str):
    """A NumPy array as an MLX array of `dtype` (bfloat16 by way of float32)."""
    import mlx.core as mx
    if dtype == "complex64":
        return mx.array(np.asarray(value, dtype=np.complex64))
    if dtype == "float64":
        return mx.array(np.asarray(np.real(value), dtype=np.float64), dtype=mx.float64)
    return mx.array(np.asarray(np.real(value), dtype=np.float32)).astype(mx_dtype(dtype))


def to_np(x) -> np.ndarray:
    """An MLX array as float64 (complex128 when complex), evaluated."""
    import mlx.core as mx
    if x.dtype == mx.complex64:
        return np.asarray(x).astype(np.complex128)
    if x.dtype in (mx.bfloat16, mx.float16):
        x = x.astype(mx.float32)
    return np.asarray(x).astype(np.float64)


def leaf_dtype(is_complex: bool, dtype: str) -> str:
    """The dtype a leaf takes when the check runs in `dtype`: real leaves take it,
    complex leaves are complex64 (MLX's only complex type)."""
    if is_complex:
        return "complex64"
    return "float32" if dtype == "complex64" else dtype


def round_to(value: np.ndarray, dtype: str) -> np.ndarray:
    """value rounded to the nearest `dtype` number, kept in float64/complex128, so that
    the point the oracle differentiates at is the point every dtype's check sees."""
    import mlx.core as mx
    if np.iscomplexobj(value):
        return np.asarray(value, dtype=np.complex64).astype(np.complex128)
    x = mx.array(np.asarray(value, dtype=np.float32)).astype(mx_dtype(dtype)).astype(mx.float32)
    return np.asarray(x).astype(np.float64)


class Oracle:
    """fn at float64 (or the stated fallback) on the CPU: `F(points)` -> flat outputs."""

    def __init__(self, problem, complex_leaves: list):
        self.problem, self.complex = problem, complex_leaves
        self.notes, self.precision = [], "float64"
        if any(complex_leaves):
            self.notes.append("complex leaves are evaluated in complex64 (MLX has no complex128): "
                              "their part of the oracle has float32-level evaluation error")
            self.precision = "float32"

    def __call__(self, points: list) -> list:
        import mlx.core as mx
        real = "float64" if self.precision == "float64" else "float32"
        with mx.stream(mx.cpu):
            arrays = [to_mx(p, leaf_dtype(c, real)) for p, c in zip(points, self.complex)]
            out = self.problem.call(arrays)
            mx.eval(out)
        return [to_np(y) for y in out], [str(y.dtype).rsplit(".", 1)[-1] for y in out]

    def start(self, points: list) -> list:
        """The outputs at the base point, falling back to float32 (with a note) where
        fn does not run in float64 or returns a lower precision."""
        try:
            out, dtypes = self(points)
        except Exception as e:   # an op that refuses float64: any exception type MLX raises
            self.notes.append(f"fn raised in float64 ({type(e).__name__}: {str(e)[:120]}); "
                              "the oracle runs in float32 with a float32-level bound")
            self.precision = "float32"
            return self(points)[0]
        low = [d for d in dtypes if d not in ("float64", "complex64" if any(self.complex) else "")]
        if low and self.precision == "float64":
            self.notes.append(f"with float64 leaves fn returns {', '.join(sorted(set(low)))} "
                              "(an op without float64): the oracle's bound is float32-level")
            self.precision = "float32"
        return out

    @property
    def eval_error(self) -> float:
        return EVAL_ERROR[self.precision]
