"""The MLX bridge: operands into MLX arrays, MLX arrays back into float64 numpy,
the scenario's MLX call as a function of its differentiated operands, and an
exception as one line of text. The executor and every oracle's measuring
function go through it; mlx is imported inside the functions only, so that the
validator (numpy only) may import the oracle modules that name it.

Complex calls (complex64 operands, complex128 references) follow MLX's
convention, which MLX does not document; on 0.32.4 it is (tests/running/
test_transforms.py holds it): the VJP of f at z with cotangent g is the real
gradient of L = Re sum(conj(g) * f(z)), packed as dL/dRe z + i dL/dIm z, the
conjugate-Wirtinger form PyTorch returns (2 dL/d conj(z)), not JAX's
conjugate of it. For a holomorphic f that is conj(f'(z)) * g; the gradient of
|z|^2 is 2 z. mx.jvp is the plain pushforward, f'(z) u.
"""
from __future__ import annotations

import numpy as np

from ..core import layout, opinfo

MX_DTYPES = ("float32", "float16", "bfloat16", "float64", "complex64")
MX_COMPLEX = ("complex64",)


def mx():
    import mlx.core
    return mlx.core


def host(values: np.ndarray, dtype: str) -> np.ndarray:
    """Values as handed to mx.array for `dtype`: float32 (MLX rounds on to half
    precision itself), float64 and complex64 as they are (core/tensors.py as_seen
    is the same path in numpy)."""
    if dtype == "float64":
        return np.asarray(values, dtype=np.float64)
    if dtype in MX_COMPLEX or np.iscomplexobj(values):
        return np.asarray(values, dtype=np.complex128).astype(np.complex64)
    return np.asarray(values, dtype=np.float64).astype(np.float32)


def to_mlx(t, dtype=None):
    """Evaluated storage first, then the views: MLX gets a real view onto it."""
    m = mx()
    dtype = dtype or t.dtype
    store = m.array(host(layout.storage(t, np.float64), dtype), dtype=getattr(m, dtype))
    m.eval(store)
    for view in t.views:
        store = layout.apply_view(store, view, xp=m)
    return store


def array(values, dtype: str):
    """A numpy array as an MLX array of `dtype`, the way operands are converted."""
    m = mx()
    return m.array(host(values, dtype), dtype=getattr(m, dtype))


def to_numpy(x) -> np.ndarray:
    m = mx()
    if x.dtype == m.complex64:
        return np.array(x).astype(np.complex128)
    if x.dtype in (m.bfloat16, m.float16):
        x = x.astype(m.float32)
    return np.array(x, dtype=np.float64)


def dtype_name(x) -> str:
    """An MLX array's dtype as the scenario schema names it ("float32", ...)."""
    return str(x.dtype).rsplit(".", 1)[-1]


def like(values, primal):
    """A numpy array (a direction, a stepped operand) as an MLX array of `primal`'s dtype."""
    return array(values, dtype_name(primal))


def error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".replace("\n", " ")[:500]


class Call:
    """The scenario's MLX call as a function of its differentiated operands.
    Integer operands are handed over as int64 numpy arrays (the call converts
    them as MLX wants); floating ones as MLX arrays, views applied."""

    def __init__(self, s, params=None):
        self.s, self.info = s, s.info
        self.params = s.params if params is None else params
        self.fn = opinfo.resolve(self.info.mlx_call)
        ints = self.info.integer_operands
        self.operands = {n: (layout.logical(t, np.int64) if n in ints else to_mlx(t))
                         for n, t in s.operands.items()}
        self.primals = [self.operands[n] for n in s.wrt]

    def __call__(self, *diff):
        return self.fn(dict(self.operands, **dict(zip(self.s.wrt, diff))), self.params)

    def pair_loss(self, *diff):
        y = self(*diff)
        y = y.reshape((-1,) + tuple(y.shape[-2:]))
        return 0.5 * ((y[0] - y[1]) ** 2).sum()

    def cotangent(self, cot: np.ndarray):
        """The cotangent as MLX takes it: in the call's dtype, complex where the
        output is (a real output of a complex call takes a float32 cotangent)."""
        dtype = self.s.dtype
        if np.iscomplexobj(cot) and dtype not in MX_COMPLEX:
            dtype = "complex64"
        elif not np.iscomplexobj(cot) and dtype in MX_COMPLEX:
            dtype = "float32"
        return array(cot, dtype)

    def vjp(self, cot: np.ndarray):
        """(forward, {operand: gradient}) as float64 (complex128) numpy."""
        m = mx()
        (y,), grads = m.vjp(self, self.primals, [self.cotangent(cot)])
        m.eval(y, *grads)
        return to_numpy(y), {n: to_numpy(g) for n, g in zip(self.s.wrt, grads)}

    def forward(self) -> np.ndarray:
        y = self(*self.primals)
        mx().eval(y)
        return to_numpy(y)

    def vjp_outputs(self, *args):
        """(forward, *gradients) of the VJP at (*primals, cotangent), as MLX arrays: the
        function the transform oracles hand to mx.compile and mx.vmap."""
        (y,), grads = mx().vjp(self, list(args[:-1]), [args[-1]])
        return (y, *grads)
