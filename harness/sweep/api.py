"""The API table: how to call each differentiable public function of MLX for the
sweep, and, for every public function that is not differentiable, why.

One `Entry` per call form: the function's name as the inventory spells it, the call
(arrays in, arrays or a pytree out; a layer's entry builds the module), and its
arguments (`Arg`: shape, value domain, dtype role). The sweep derives the corners
(sizes 0 and 1, rank 0, views, dtypes, special values) from the arguments, so no
entry lists its own corners. Whether MLX defines a gradient is not written here:
where its VJP says "not implemented", the sweep records a missing rule, never a
defect.

`EXCLUDED` names every public function with no gradient to check and says why;
`coverage()` holds the inventory against both lists, so a function a new MLX
adds is "not covered" until someone adds an entry or a reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

# Value domains (sweep/corners.py draws from them, its tails and its special points).
REAL, POSITIVE, UNIT, ABOVE_ONE, NONZERO = "real", "positive", "unit", "above_one", "nonzero"
SPD, INDEX, BOOL, PROB = "spd", "index", "bool", "probability"
SIMPLEX = "simplex"   # probabilities along the last axis summing to 1 (a distribution)


@dataclass(frozen=True)
class Arg:
    shape: tuple
    domain: str = REAL
    # "float": the dtype under test, differentiated; "int32"/"uint32"/"bool": left alone.
    dtype: str = "float"
    # For INDEX: the exclusive upper bound of the indices.
    bound: int = 0
    # True when any shape works (elementwise): the sweep then tries rank 0, size 0, broadcasts.
    free: bool = False

    @property
    def differentiable(self) -> bool:
        return self.dtype == "float"


@dataclass(frozen=True)
class Entry:
    name: str
    call: Callable
    args: tuple
    variant: str = ""
    # A layer: `call()` builds the nn.Module (float32), whose parameters are checked too.
    layer: bool = False
    # The function has kinks or steps (abs, maximum, sort, clip...): a point where one-sided
    # differences disagree is stated as not differentiable there, never a defect.
    kinks: bool = False
    # Real-valued only (no complex64 corner): MLX refuses complex input here or it has no meaning.
    real_only: bool = True
    # The function weighs its inputs by exp(x_j - y) against a running log-sum y kept in the
    # dtype (logcumsumexp's scan): at large |x| each step rounds y by u (|x| + log n), a
    # relative error of every weight (sweep/measure.py's conditioning bound).
    log_sum_scan: bool = False
    note: str = ""
    tags: tuple = field(default_factory=tuple)

    @property
    def id(self) -> str:
        return f"{self.name}[{self.variant}]" if self.variant else self.name


def _mx():
    import mlx.core as mx
    return mx


def _nn():
    import mlx.nn as nn
    return nn


def _a(*shape, domain=REAL, free=False):
    return Arg(tuple(shape), domain, free=free)


def _idx(*shape, bound):
    return Arg(tuple(shape), INDEX, "int32", bound)


X = _a(3, 4, free=True)


def _fn(path: str):
    """The function at a dotted path of mlx ("mx.linalg.inv", "nn.losses.mse_loss"), looked
    up when called so the table imports no mlx."""
    def get():
        mx, nn = _mx(), _nn()
        head, *rest = path.split(".")
        obj = {"mx": mx, "nn": nn}[head]
        for part in rest:
            obj = getattr(obj, part)
        return obj
    return get


def _unary(name, domain=REAL, kinks=False, complex_ok=False):
    f = _fn(name)
    return Entry(name, lambda x: f()(x), (Arg((3, 4), domain, free=True),), kinks=kinks,
                 real_only=not complex_ok)


def _binary(name, da=REAL, db=REAL, kinks=False, complex_ok=False):
    f = _fn(name)
    return Entry(name, lambda a, b: f()(a, b), (Arg((3, 4), da, free=True), Arg((3, 4), db, free=True)),
                 kinks=kinks, real_only=not complex_ok)


def _call(name, call, *args, variant="", kinks=False, complex_ok=False, note="", log_sum_scan=False):
    f = _fn(name)
    return Entry(name, lambda *a: call(f(), *a), tuple(args), variant, kinks=kinks,
                 real_only=not complex_ok, note=note, log_sum_scan=log_sum_scan)


def _layer(name, build, *args, variant="", kinks=False, note=""):
    f = _fn(name)
    return Entry(name, lambda: build(f()), tuple(args), variant, layer=True, kinks=kinks, note=note)


UNARY = [
    _unary("mx.abs", kinks=True, complex_ok=True), _unary("mx.arccos", UNIT), _unary("mx.arccosh", ABOVE_ONE),
    _unary("mx.arcsin", UNIT), _unary("mx.arcsinh", complex_ok=True), _unary("mx.arctan"),
    _unary("mx.arctanh", UNIT), _unary("mx.acos", UNIT), _unary("mx.acosh", ABOVE_ONE), _unary("mx.asin", UNIT),
    _unary("mx.asinh"), _unary("mx.atan"), _unary("mx.atanh", UNIT), _unary("mx.ceil", kinks=True),
    _unary("mx.floor", kinks=True), _unary("mx.round", kinks=True), _unary("mx.trunc", kinks=True),
    _unary("mx.cos", complex_ok=True), _unary("mx.cosh", complex_ok=True), _unary("mx.degrees"),
    _unary("mx.radians"), _unary("mx.erf"), _unary("mx.erfinv", UNIT), _unary("mx.exp", complex_ok=True),
    _unary("mx.expm1"), _unary("mx.log", POSITIVE, complex_ok=True), _unary("mx.log10", POSITIVE),
    _unary("mx.log1p", POSITIVE), _unary("mx.log2", POSITIVE), _unary("mx.negative", complex_ok=True),
    _unary("mx.positive", complex_ok=True), _unary("mx.reciprocal", NONZERO, complex_ok=True),
    _unary("mx.rsqrt", POSITIVE), _unary("mx.sigmoid"), _unary("mx.sign", kinks=True),
    _unary("mx.sin", complex_ok=True), _unary("mx.sinh", complex_ok=True), _unary("mx.sqrt", POSITIVE),
    _unary("mx.square", complex_ok=True), _unary("mx.tan", UNIT), _unary("mx.tanh", complex_ok=True),
    _unary("mx.conj", complex_ok=True), _unary("mx.conjugate", complex_ok=True),
    _unary("mx.real", complex_ok=True), _unary("mx.imag", complex_ok=True), _unary("mx.contiguous"),
    _unary("mx.nan_to_num"), _unary("mx.matrix_transpose"), _unary("mx.softmax", complex_ok=False),
]

BINARY = [
    _binary("mx.add", complex_ok=True), _binary("mx.subtract", complex_ok=True),
    _binary("mx.multiply", complex_ok=True), _binary("mx.divide", db=NONZERO, complex_ok=True),
    _binary("mx.power", POSITIVE), _binary("mx.pow", POSITIVE), _binary("mx.maximum", kinks=True),
    _binary("mx.minimum", kinks=True), _binary("mx.logaddexp"), _binary("mx.arctan2", db=NONZERO),
    _binary("mx.atan2", db=NONZERO), _binary("mx.remainder", db=NONZERO, kinks=True),
    _binary("mx.floor_divide", db=NONZERO, kinks=True),
]

REDUCTIONS = [
    _call("mx.sum", lambda f, x: f(x, axis=1), X, complex_ok=True),
    _call("mx.sum", lambda f, x: f(x, axis=(0, 1), keepdims=True), X, variant="keepdims"),
    _call("mx.mean", lambda f, x: f(x, axis=-1), X),
    _call("mx.prod", lambda f, x: f(x, axis=0), X, complex_ok=True),
    _call("mx.max", lambda f, x: f(x, axis=1), X, kinks=True),
    _call("mx.min", lambda f, x: f(x, axis=0), X, kinks=True),
    _call("mx.logsumexp", lambda f, x: f(x, axis=1), X),
    _call("mx.std", lambda f, x: f(x, axis=1), X),
    _call("mx.std", lambda f, x: f(x, axis=1, ddof=1), X, variant="ddof1"),
    _call("mx.var", lambda f, x: f(x, axis=0), X),
    _call("mx.median", lambda f, x: f(x, axis=1), X, kinks=True),
    _call("mx.cumsum", lambda f, x: f(x, axis=1), X, complex_ok=True),
    _call("mx.cumsum", lambda f, x: f(x, axis=1, reverse=True, inclusive=False), X, variant="reverse-exclusive"),
    _call("mx.cumulative_sum", lambda f, x: f(x, axis=0), X),
    _call("mx.cumprod", lambda f, x: f(x, axis=1), X),
    _call("mx.cumprod", lambda f, x: f(x, axis=1, reverse=True, inclusive=False), X, variant="reverse-exclusive"),
    _call("mx.cumulative_prod", lambda f, x: f(x, axis=0), X),
    _call("mx.cummax", lambda f, x: f(x, axis=1), X, kinks=True),
    _call("mx.cummin", lambda f, x: f(x, axis=1, reverse=True), X, kinks=True),
    _call("mx.logcumsumexp", lambda f, x: f(x, axis=1), X, log_sum_scan=True),
    _call("mx.softmax", lambda f, x: f(x, axis=0, precise=True), X, variant="precise-axis0"),
    _call("mx.sort", lambda f, x: f(x, axis=1), X, kinks=True),
    _call("mx.partition", lambda f, x: f(x, 2, axis=1), X, kinks=True),
    _call("mx.topk", lambda f, x: f(x, 2, axis=1), X, kinks=True),
    _call("mx.trace", lambda f, x: f(x), _a(4, 4)),
    _call("mx.trace", lambda f, x: f(x, offset=1, axis1=1, axis2=2), _a(2, 3, 4), variant="offset"),
    _call("mx.diagonal", lambda f, x: f(x, offset=-1), _a(4, 3)),
    _call("mx.diag", lambda f, x: f(x), _a(4), variant="vector"),
    _call("mx.diag", lambda f, x: f(x, k=1), _a(3, 4), variant="matrix"),
    _call("mx.diff", lambda f, x: f(x, n=2, axis=1), _a(3, 5)),
    _call("mx.matrix_norm", lambda f, x: f(x), X),
    _call("mx.matrix_norm", lambda f, x: f(x, ord="nuc", stream=_mx().cpu), X, variant="nuclear"),
    _call("mx.minmax", lambda f, x: f(x, axis=1), X, kinks=True),
]

SHAPES = [
    _call("mx.reshape", lambda f, x: f(x, (4, 3)), X),
    _call("mx.flatten", lambda f, x: f(x, 0, 1), _a(2, 3, 2)),
    _call("mx.unflatten", lambda f, x: f(x, 1, (2, 2)), X),
    _call("mx.squeeze", lambda f, x: f(x, 1), _a(3, 1, 2)),
    _call("mx.expand_dims", lambda f, x: f(x, (0, 2)), X),
    _call("mx.transpose", lambda f, x: f(x, (2, 0, 1)), _a(2, 3, 4)),
    _call("mx.permute_dims", lambda f, x: f(x, (1, 0)), X),
    _call("mx.swapaxes", lambda f, x: f(x, 0, -1), _a(2, 3, 4)),
    _call("mx.moveaxis", lambda f, x: f(x, 0, 2), _a(2, 3, 4)),
    _call("mx.broadcast_to", lambda f, x: f(x, (2, 3, 4)), _a(3, 1)),
    _call("mx.broadcast_arrays", lambda f, a, b: f(a, b), _a(3, 1), _a(1, 4)),
    _call("mx.concatenate", lambda f, a, b: f([a, b], axis=1), X, _a(3, 2)),
    _call("mx.concat", lambda f, a, b: f([a, b], axis=0), X, _a(1, 4)),
    _call("mx.stack", lambda f, a, b: f([a, b], axis=1), X, X),
    _call("mx.split", lambda f, x: f(x, [1, 3], axis=1), X),
    _call("mx.unstack", lambda f, x: f(x, axis=1), X),
    _call("mx.tile", lambda f, x: f(x, (2, 1)), X),
    _call("mx.repeat", lambda f, x: f(x, 2, axis=1), X),
    _call("mx.roll", lambda f, x: f(x, 3, axis=1), X),
    _call("mx.roll", lambda f, x: f(x, (1, -2), axis=(0, 1)), X, variant="two-axes"),
    _call("mx.flip", lambda f, x: f(x, axis=0), X),
    _call("mx.flatten", lambda f, x: f(x), X, variant="all"),
    _call("mx.pad", lambda f, x: f(x, ((1, 0), (2, 1))), X),
    _call("mx.pad", lambda f, x: f(x, 1, mode="edge"), X, variant="edge"),
    _call("mx.slice", lambda f, x: f(x, _mx().array([1]), (1,), (3, 2)), X),
    _call("mx.slice_update", lambda f, x, u: f(x, u, _mx().array([1]), (1,)), X, _a(3, 2)),
    _call("mx.take", lambda f, x, i: f(x, i, axis=1), X, _idx(5, bound=4)),
    _call("mx.take", lambda f, x, i: f(x, i), X, _idx(3, 2, bound=12), variant="flat"),
    _call("mx.take_along_axis", lambda f, x, i: f(x, i, axis=1), X, _idx(3, 5, bound=4)),
    _call("mx.put_along_axis", lambda f, x, i, v: f(x, i, v, axis=1), X, _idx(3, 2, bound=4), _a(3, 2)),
    _call("mx.atleast_1d", lambda f, x: f(x), _a(free=True)),
    _call("mx.atleast_2d", lambda f, x: f(x), _a(4)),
    _call("mx.atleast_3d", lambda f, x: f(x), X),
    _call("mx.tril", lambda f, x: f(x, k=-1), _a(4, 4)),
    _call("mx.triu", lambda f, x: f(x, k=1), _a(3, 4)),
    _call("mx.as_strided", lambda f, x: f(x, (3, 3), (1, 1)), _a(5)),
    _call("mx.meshgrid", lambda f, a, b: f(a, b), _a(3), _a(2)),
    _call("mx.astype", lambda f, x: f(x, _mx().float32), X),
    # casts to integer and bool types and back: piecewise constant, derivative 0 between steps
    *[_call("mx.astype", lambda f, x, t=t: f(f(x, getattr(_mx(), t)), _mx().float32), X, variant=f"via-{t}",
            kinks=True) for t in ("int32", "uint8", "int8", "bool_")],
    _call("mx.where", lambda f, c, a, b: f(c, a, b), Arg((3, 4), BOOL, "bool"), X, X),
    _call("mx.clip", lambda f, x: f(x, -0.5, 0.5), X, kinks=True),
    _call("mx.clip", lambda f, x, lo, hi: f(x, lo, hi), X, _a(3, 1), _a(1, 4), variant="array-bounds", kinks=True),
    _call("mx.zeros_like", lambda f, x: f(x) + x, X),
    _call("mx.ones_like", lambda f, x: f(x) * x, X),
    _call("mx.full", lambda f, v: f((2, 3), v), _a()),
    _call("mx.full_like", lambda f, x: f(x, 2.0) * x, X),
    _call("mx.depends", lambda f, a, b: f([a], [b])[0], X, X),
]

PRODUCTS = [
    _call("mx.matmul", lambda f, a, b: f(a, b), _a(3, 4), _a(4, 2), complex_ok=True),
    _call("mx.matmul", lambda f, a, b: f(a, b), _a(2, 1, 3, 4), _a(3, 4, 2), variant="batched-broadcast"),
    _call("mx.matmul", lambda f, a, b: f(a, b), _a(4), _a(4, 2), variant="vector-matrix"),
    _call("mx.addmm", lambda f, c, a, b: f(c, a, b, alpha=2.0, beta=0.5), _a(3, 2), _a(3, 4), _a(4, 2)),
    _call("mx.inner", lambda f, a, b: f(a, b), X, _a(2, 4)),
    _call("mx.outer", lambda f, a, b: f(a, b), _a(3), _a(4)),
    _call("mx.kron", lambda f, a, b: f(a, b), _a(2, 3), _a(2, 2)),
    _call("mx.tensordot", lambda f, a, b: f(a, b, axes=([1], [0])), X, _a(4, 2)),
    _call("mx.tensordot", lambda f, a, b: f(a, b, axes=2), _a(2, 3, 4), _a(3, 4, 2), variant="axes2"),
    _call("mx.vecdot", lambda f, a, b: f(a, b), X, X),
    _call("mx.einsum", lambda f, a, b: f("ij,jk->ik", a, b), _a(3, 4), _a(4, 2)),
    _call("mx.einsum", lambda f, a: f("ii->i", a), _a(3, 3), variant="diagonal"),
    _call("mx.einsum", lambda f, a, b: f("bij,bjk->bik", a, b), _a(2, 3, 4), _a(2, 4, 2), variant="batched"),
    _call("mx.einsum", lambda f, a, b, c: f("ij,jk,kl->il", a, b, c), _a(2, 3), _a(3, 4), _a(4, 2),
          variant="chain"),
    _call("mx.hadamard_transform", lambda f, x: f(x), _a(3, 8)),
    _call("mx.block_masked_mm", lambda f, a, b: f(a, b, block_size=32), _a(32, 64), _a(64, 32)),
    _call("mx.gather_mm", lambda f, a, b, i: f(a, b, rhs_indices=i), _a(3, 2, 4), _a(2, 4, 3),
          _idx(3, bound=2)),
    _call("mx.segmented_mm", lambda f, a, b, s: f(a, b, s), _a(2, 6), _a(6, 3),
          Arg((2, 2), INDEX, "uint32", 7), note="segments are sorted by the sweep's corner"),
    _call("mx.conv1d", lambda f, x, w: f(x, w), _a(1, 8, 2), _a(3, 3, 2)),
    _call("mx.conv1d", lambda f, x, w: f(x, w, stride=2, padding=1, dilation=2), _a(1, 9, 2), _a(3, 3, 2),
          variant="stride-pad-dilation"),
    _call("mx.conv1d", lambda f, x, w: f(x, w, groups=2), _a(1, 8, 4), _a(4, 3, 2), variant="groups"),
    _call("mx.conv2d", lambda f, x, w: f(x, w, padding=1), _a(1, 5, 5, 2), _a(3, 3, 3, 2)),
    _call("mx.conv3d", lambda f, x, w: f(x, w), _a(1, 4, 4, 4, 1), _a(2, 2, 2, 2, 1)),
    _call("mx.conv_general", lambda f, x, w: f(x, w, stride=1, padding=1, flip=True), _a(1, 6, 2), _a(2, 3, 2)),
    _call("mx.conv_transpose1d", lambda f, x, w: f(x, w, stride=2), _a(1, 5, 2), _a(3, 3, 2)),
    _call("mx.conv_transpose2d", lambda f, x, w: f(x, w), _a(1, 4, 4, 2), _a(2, 3, 3, 2)),
    _call("mx.conv_transpose3d", lambda f, x, w: f(x, w), _a(1, 3, 3, 3, 1), _a(1, 2, 2, 2, 1)),
    _call("mx.convolve", lambda f, a, b: f(a, b, mode="full"), _a(6), _a(3)),
    _call("mx.convolve", lambda f, a, b: f(a, b, mode="valid"), _a(6), _a(3), variant="valid"),
]


def _spd(f, a):
    mx = _mx()
    return f(a @ mx.swapaxes(a, -1, -2) + 4.0 * mx.eye(a.shape[-1], dtype=a.dtype), stream=mx.cpu)


def _lin(name, call, *args, variant=""):
    # MLX's linalg runs on the CPU stream only.
    return _call(name, lambda f, *a: call(f, *a), *args, variant=variant)


LINALG = [
    _lin("mx.linalg.cholesky", _spd, _a(3, 3)),
    _lin("mx.linalg.cholesky_inv", lambda f, a: f(_mx().linalg.cholesky(
        a @ a.T + 4.0 * _mx().eye(3, dtype=a.dtype), stream=_mx().cpu), stream=_mx().cpu), _a(3, 3)),
    _lin("mx.linalg.inv", lambda f, a: f(a + 3.0 * _mx().eye(3, dtype=a.dtype), stream=_mx().cpu), _a(3, 3)),
    _lin("mx.linalg.tri_inv", lambda f, a: f(a + 3.0 * _mx().eye(3, dtype=a.dtype), upper=False,
                                             stream=_mx().cpu), _a(3, 3)),
    _lin("mx.linalg.pinv", lambda f, a: f(a, stream=_mx().cpu), _a(4, 3)),
    _lin("mx.linalg.det", lambda f, a: f(a + 3.0 * _mx().eye(3, dtype=a.dtype), stream=_mx().cpu), _a(3, 3)),
    _lin("mx.linalg.slogdet", lambda f, a: f(a + 3.0 * _mx().eye(3, dtype=a.dtype), stream=_mx().cpu)[1],
         _a(3, 3)),
    _lin("mx.linalg.solve", lambda f, a, b: f(a + 3.0 * _mx().eye(3, dtype=a.dtype), b, stream=_mx().cpu),
         _a(3, 3), _a(3, 2)),
    _lin("mx.linalg.solve_triangular", lambda f, a, b: f(_mx().tril(a) + 3.0 * _mx().eye(3, dtype=a.dtype), b,
                                                         upper=False, stream=_mx().cpu), _a(3, 3), _a(3, 2)),
    _lin("mx.linalg.qr", lambda f, a: f(a, stream=_mx().cpu), _a(4, 3)),
    _lin("mx.linalg.svd", lambda f, a: f(a, stream=_mx().cpu), _a(4, 3)),
    _lin("mx.linalg.svd", lambda f, a: f(a, compute_uv=False, stream=_mx().cpu), _a(4, 3), variant="values"),
    _lin("mx.linalg.eigh", lambda f, a: f(a + a.T, stream=_mx().cpu), _a(3, 3)),
    _lin("mx.linalg.eigvalsh", lambda f, a: f(a + a.T, stream=_mx().cpu), _a(3, 3)),
    _lin("mx.linalg.eig", lambda f, a: f(a + a.T, stream=_mx().cpu), _a(3, 3)),
    _lin("mx.linalg.eigvals", lambda f, a: f(a + a.T, stream=_mx().cpu), _a(3, 3)),
    _lin("mx.linalg.lu", lambda f, a: f(a, stream=_mx().cpu), _a(3, 3)),
    _lin("mx.linalg.lu_factor", lambda f, a: f(a, stream=_mx().cpu)[0], _a(3, 3)),
    _lin("mx.linalg.cross", lambda f, a, b: f(a, b), _a(2, 3), _a(2, 3)),
    _lin("mx.linalg.norm", lambda f, a: f(a, ord=2, axis=1), X, variant="vector-2"),
    _lin("mx.linalg.norm", lambda f, a: f(a, ord="nuc", stream=_mx().cpu), X, variant="nuclear"),
    _lin("mx.linalg.norm", lambda f, a: f(a, ord=float("inf"), axis=1), X, variant="vector-inf"),
]


def _parts(y):
    # A complex output as (real, imaginary): the gradient of each is a real question.
    mx = _mx()
    return (mx.real(y), mx.imag(y))


def _fft(name, call, *args, variant=""):
    return _call(name, lambda f, *a: _parts(call(f, *a)), *args, variant=variant, complex_ok=True)


FFT = [
    _fft("mx.fft.fft", lambda f, x: f(x), _a(3, 8)),
    _fft("mx.fft.fft", lambda f, x: f(x, n=6, axis=0), _a(4, 3), variant="n-axis0"),
    _fft("mx.fft.ifft", lambda f, x: f(x), _a(3, 8)),
    _fft("mx.fft.fft2", lambda f, x: f(x), _a(4, 4)),
    _fft("mx.fft.ifft2", lambda f, x: f(x), _a(4, 4)),
    _fft("mx.fft.fftn", lambda f, x: f(x), _a(2, 4, 4)),
    _fft("mx.fft.ifftn", lambda f, x: f(x, s=(3, 5), axes=(0, 1)), _a(4, 4)),
    _fft("mx.fft.rfft", lambda f, x: f(x), _a(3, 8)),
    _fft("mx.fft.rfft", lambda f, x: f(x, n=5), _a(3, 8), variant="odd-n"),
    _call("mx.fft.irfft", lambda f, x: f(x), _a(3, 5)),
    _call("mx.fft.irfft", lambda f, x: f(x, n=9), _a(3, 5), variant="odd-n"),
    _fft("mx.fft.rfft2", lambda f, x: f(x), _a(4, 6)),
    _call("mx.fft.irfft2", lambda f, x: f(x), _a(4, 4)),
    _fft("mx.fft.rfftn", lambda f, x: f(x), _a(2, 4, 6)),
    _call("mx.fft.irfftn", lambda f, x: f(x), _a(2, 4, 4)),
    _call("mx.fft.fftshift", lambda f, x: f(x), _a(3, 5)),
    _call("mx.fft.ifftshift", lambda f, x: f(x, axes=(1,)), _a(3, 5)),
    _fft("mx.fft.stft", lambda f, x: f(x, n_fft=8, hop_length=4), _a(32)),
    _call("mx.fft.istft", lambda f, x: f(x, n_fft=8, hop_length=4), _a(9, 5)),
]

FAST = [
    _call("mx.fast.layer_norm", lambda f, x, w, b: f(x, w, b, 1e-5), _a(3, 8), _a(8), _a(8)),
    _call("mx.fast.layer_norm", lambda f, x: f(x, None, None, 1e-5), _a(3, 8), variant="no-affine"),
    _call("mx.fast.rms_norm", lambda f, x, w: f(x, w, 1e-5), _a(3, 8), _a(8)),
    _call("mx.fast.rope", lambda f, x: f(x, 8, traditional=False, base=10000.0, scale=1.0, offset=2),
          _a(1, 2, 4, 8)),
    _call("mx.fast.rope", lambda f, x: f(x, 4, traditional=True, base=10000.0, scale=0.5, offset=0),
          _a(1, 2, 4, 8), variant="traditional-partial"),
    _call("mx.fast.scaled_dot_product_attention", lambda f, q, k, v: f(q, k, v, scale=0.5),
          _a(1, 2, 3, 8), _a(1, 2, 5, 8), _a(1, 2, 5, 8)),
    _call("mx.fast.scaled_dot_product_attention", lambda f, q, k, v: f(q, k, v, scale=0.5, mask="causal"),
          _a(1, 2, 4, 8), _a(1, 2, 4, 8), _a(1, 2, 4, 8), variant="causal"),
    _call("mx.fast.scaled_dot_product_attention", lambda f, q, k, v, m: f(q, k, v, scale=0.5, mask=m),
          _a(1, 2, 3, 8), _a(1, 2, 5, 8), _a(1, 2, 5, 8), _a(3, 5), variant="additive-mask"),
    _call("mx.fast.cross_entropy", lambda f, x, t: f(x, t), _a(3, 6), _idx(3, bound=6)),
    _call("mx.fast.gated_delta_update", lambda f, q, k, v, g, b: f(q, k, v, g, b)[0],
          _a(1, 3, 2, 4), _a(1, 3, 2, 4), _a(1, 3, 2, 4), Arg((1, 3, 2), PROB), Arg((1, 3, 2), PROB)),
]


def _act(name, call=None, domain=REAL, kinks=False, variant=""):
    f = _fn(name)
    c = call or (lambda g, x: g(x))
    return Entry(name, lambda *a: c(f(), *a), (Arg((3, 4), domain, free=True),), variant, kinks=kinks)


ACTIVATIONS = [
    _act("nn.celu"), _act("nn.elu"), _act("nn.gelu"), _act("nn.gelu_approx"), _act("nn.gelu_fast_approx"),
    _act("nn.glu", lambda f, x: f(x, axis=-1)), _act("nn.hard_shrink", kinks=True),
    _act("nn.hard_tanh", kinks=True), _act("nn.hardswish", kinks=True), _act("nn.leaky_relu", kinks=True),
    _act("nn.log_sigmoid"), _act("nn.log_softmax"), _act("nn.mish"), _act("nn.relu", kinks=True),
    _act("nn.relu2", kinks=True), _act("nn.relu6", kinks=True), _act("nn.selu"), _act("nn.sigmoid"),
    _act("nn.silu"), _act("nn.softmax"), _act("nn.softmin"), _act("nn.softplus"),
    _act("nn.softshrink", kinks=True), _act("nn.softsign"), _act("nn.tanh"),
    _act("nn.log_softmax", lambda f, x: f(x, axis=0), variant="axis0"),
    _act("nn.celu", lambda f, x: f(x, alpha=0.5), variant="alpha"),
    _act("nn.elu", lambda f, x: f(x, alpha=2.0), variant="alpha"),
    _act("nn.softplus", lambda f, x: f(x * 30.0), variant="large"),
    Entry("nn.prelu", lambda x, a: _nn().prelu(x, a), (X, _a(4)), kinks=True),
]


def _loss(name, call, *args, variant="", kinks=False):
    return _call(name, call, *args, variant=variant, kinks=kinks)


LOSSES = [
    _loss("nn.losses.binary_cross_entropy", lambda f, p, t: f(p, t, reduction="mean"), X,
          Arg((3, 4), PROB)),
    _loss("nn.losses.binary_cross_entropy", lambda f, p, t: f(p, t, with_logits=False, reduction="sum"),
          Arg((3, 4), PROB), Arg((3, 4), PROB), variant="probabilities"),
    _loss("nn.losses.cosine_similarity_loss", lambda f, a, b: f(a, b, reduction="mean"), X, X),
    _loss("nn.losses.cross_entropy", lambda f, x, t: f(x, t, reduction="mean"), X, _idx(3, bound=4)),
    _loss("nn.losses.cross_entropy", lambda f, x, t: f(x, t, label_smoothing=0.1, reduction="sum"), X,
          _idx(3, bound=4), variant="smoothing"),
    # probability targets are distributions: MLX's loss shifts the logits by a stop_gradient max,
    # which cancels only when each row of targets sums to 1
    _loss("nn.losses.cross_entropy", lambda f, x, t: f(x, t, reduction="none"), X, Arg((3, 4), SIMPLEX),
          variant="probabilities"),
    _loss("nn.losses.gaussian_nll_loss", lambda f, x, t, v: f(x, t, v, reduction="mean"), X, X,
          Arg((3, 4), POSITIVE)),
    _loss("nn.losses.gaussian_nll_loss", lambda f, x, t, v: f(x, t, v, full=True, reduction="sum"), X, X,
          Arg((3, 4), POSITIVE), variant="full"),
    _loss("nn.losses.hinge_loss", lambda f, x, t: f(x, t, reduction="mean"), X, X, kinks=True),
    _loss("nn.losses.huber_loss", lambda f, x, t: f(x, t, delta=0.5, reduction="mean"), X, X, kinks=True),
    _loss("nn.losses.kl_div_loss", lambda f, x, t: f(x, t, reduction="mean"), X, X),
    _loss("nn.losses.l1_loss", lambda f, x, t: f(x, t, reduction="sum"), X, X, kinks=True),
    _loss("nn.losses.log_cosh_loss", lambda f, x, t: f(x, t, reduction="mean"), X, X),
    _loss("nn.losses.margin_ranking_loss", lambda f, a, b, t: f(a, b, t, margin=0.1, reduction="mean"),
          _a(5), _a(5), _a(5), kinks=True),
    _loss("nn.losses.mse_loss", lambda f, x, t: f(x, t, reduction="mean"), X, X),
    _loss("nn.losses.nll_loss", lambda f, x, t: f(x, t, reduction="mean"), X, _idx(3, bound=4)),
    _loss("nn.losses.smooth_l1_loss", lambda f, x, t: f(x, t, beta=0.5, reduction="mean"), X, X, kinks=True),
    _loss("nn.losses.triplet_loss", lambda f, a, p, n: f(a, p, n, reduction="mean"), X, X, X, kinks=True),
]


def _module(*ctor, setup=None):
    def build(cls):
        m = cls(*ctor)
        if setup:
            setup(m)
        return m
    return build


def _l(name, ctor, *args, variant="", kinks=False, setup=None):
    return _layer(name, _module(*ctor, setup=setup), *args, variant=variant, kinks=kinks)


def _eval(m):
    m.eval()


LAYERS = [
    _l("nn.Linear", (4, 3), X), _l("nn.Linear", (4, 3, False), X, variant="no-bias"),
    _l("nn.Bilinear", (3, 2, 4), _a(5, 3), _a(5, 2)),
    _l("nn.Conv1d", (2, 3, 3), _a(1, 8, 2)), _l("nn.Conv2d", (2, 3, 3, 2, 1), _a(1, 6, 6, 2)),
    _l("nn.Conv3d", (1, 2, 2), _a(1, 4, 4, 4, 1)), _l("nn.ConvTranspose1d", (2, 3, 3, 2), _a(1, 5, 2)),
    _l("nn.ConvTranspose2d", (2, 2, 3), _a(1, 4, 4, 2)), _l("nn.ConvTranspose3d", (1, 1, 2), _a(1, 3, 3, 3, 1)),
    _l("nn.Embedding", (10, 4), _idx(3, 2, bound=10)),
    _l("nn.LayerNorm", (4,), X), _l("nn.LayerNorm", (4, 1e-5, False), X, variant="no-affine"),
    _l("nn.RMSNorm", (4,), X), _l("nn.GroupNorm", (2, 4), _a(2, 3, 4)),
    _l("nn.GroupNorm", (2, 4, 1e-5, True, True), _a(2, 3, 4), variant="pytorch-compatible"),
    _l("nn.BatchNorm", (4,), _a(5, 4)), _l("nn.BatchNorm", (4,), _a(5, 4), variant="eval", setup=_eval),
    _l("nn.InstanceNorm", (4, 1e-5, True), _a(2, 5, 4)),
    _l("nn.MultiHeadAttention", (8, 2), _a(1, 3, 8), _a(1, 4, 8), _a(1, 4, 8)),
    _l("nn.RNN", (3, 4), _a(2, 5, 3)), _l("nn.GRU", (3, 4), _a(2, 5, 3)), _l("nn.LSTM", (3, 4), _a(2, 5, 3)),
    _l("nn.AvgPool1d", (2, 2), _a(1, 6, 2)), _l("nn.AvgPool2d", (2, 1), _a(1, 4, 4, 2)),
    _l("nn.AvgPool3d", (2, 2), _a(1, 4, 4, 4, 1)),
    _l("nn.MaxPool1d", (2, 2), _a(1, 6, 2), kinks=True), _l("nn.MaxPool2d", (2, 1), _a(1, 4, 4, 2), kinks=True),
    _l("nn.MaxPool3d", (2, 2), _a(1, 4, 4, 4, 1), kinks=True),
    _l("nn.Upsample", (2.0, "nearest"), _a(1, 3, 3, 2)),
    _l("nn.Upsample", (2.0, "linear"), _a(1, 3, 3, 2), variant="linear"),
    _l("nn.Upsample", (2.0, "linear", True), _a(1, 3, 3, 2), variant="linear-corners"),
    _l("nn.Upsample", (2.0, "cubic"), _a(1, 3, 3, 2), variant="cubic"),
    _l("nn.RoPE", (4,), _a(1, 3, 8)), _l("nn.RoPE", (8, True), _a(1, 3, 8), variant="traditional"),
    _l("nn.ALiBi", (), _a(1, 2, 3, 3)),
    _l("nn.SinusoidalPositionalEncoding", (8,), _a(5)),
    _l("nn.Identity", (), X), _l("nn.Dropout", (0.5,), X, variant="eval", setup=_eval),
    _l("nn.Dropout2d", (0.5,), _a(1, 2, 2, 3), variant="eval", setup=_eval),
    _l("nn.Dropout3d", (0.5,), _a(1, 2, 2, 2, 3), variant="eval", setup=_eval),
    _l("nn.TransformerEncoderLayer", (8, 2, 16, 0.0), _a(1, 3, 8), None, kinks=True),
    _l("nn.TransformerDecoderLayer", (8, 2, 16, 0.0), _a(1, 3, 8), _a(1, 4, 8), None, None, kinks=True),
    _l("nn.TransformerEncoder", (1, 8, 2, 16, 0.0), _a(1, 3, 8), None, kinks=True),
    _l("nn.TransformerDecoder", (1, 8, 2, 16, 0.0), _a(1, 3, 8), _a(1, 4, 8), None, None, kinks=True),
    _l("nn.Transformer", (8, 2, 1, 1, 16, 0.0), _a(1, 3, 8), _a(1, 4, 8), None, None, None, kinks=True),
    _l("nn.QuantizedLinear", (64, 4), _a(2, 64)),
]

for _cls, _fname in (("CELU", "celu"), ("ELU", "elu"), ("GELU", "gelu"), ("GLU", "glu"),
                     ("HardShrink", "hard_shrink"), ("HardTanh", "hard_tanh"), ("Hardswish", "hardswish"),
                     ("LeakyReLU", "leaky_relu"), ("LogSigmoid", "log_sigmoid"), ("LogSoftmax", "log_softmax"),
                     ("Mish", "mish"), ("PReLU", "prelu"), ("ReLU", "relu"), ("ReLU2", "relu2"),
                     ("ReLU6", "relu6"), ("SELU", "selu"), ("SiLU", "silu"), ("Sigmoid", "sigmoid"),
                     ("Softmax", "softmax"), ("Softmin", "softmin"), ("Softplus", "softplus"),
                     ("Softshrink", "softshrink"), ("Softsign", "softsign"), ("Tanh", "tanh")):
    LAYERS.append(_l(f"nn.{_cls}", (), X, kinks=_fname in {
        "hard_shrink", "hard_tanh", "hardswish", "leaky_relu", "prelu", "relu", "relu2", "relu6",
        "softshrink", "step"}))
LAYERS.append(_l("nn.Sequential", (), X))
LAYERS.append(_l("nn.GELU", ("precise",), X, variant="precise"))
LAYERS.append(_l("nn.GELU", ("fast",), X, variant="fast"))

QUANTIZED = [
    _call("mx.dequantize", lambda f, w, s, b: f(w, s, b, group_size=32, bits=4),
          Arg((4, 4), INDEX, "uint32", 2**31), _a(4, 1), _a(4, 1)),
    _call("mx.quantized_matmul", lambda f, x, w, s, b: f(x, w, s, b, transpose=True, group_size=32, bits=4),
          _a(2, 32), Arg((4, 4), INDEX, "uint32", 2**31), _a(4, 1), _a(4, 1)),
    _call("mx.gather_qmm", lambda f, x, w, s, b, i: f(x, w, s, b, rhs_indices=i, transpose=True,
                                                      group_size=32, bits=4),
          _a(3, 1, 32), Arg((2, 4, 4), INDEX, "uint32", 2**31), _a(2, 4, 1), _a(2, 4, 1), _idx(3, bound=2)),
]

ENTRIES = tuple(UNARY + BINARY + REDUCTIONS + SHAPES + PRODUCTS + LINALG + FFT + FAST + ACTIVATIONS + LOSSES
                + LAYERS + QUANTIZED)

# Every public function with nothing to differentiate, and why. "integer or boolean output":
# the result has no tangent space; "no array input": nothing to differentiate with respect to.
_INT_OUT = "integer or boolean output: no gradient to check"
_NO_INPUT = "creates an array from shapes or scalars only: no array input to differentiate"
_NOT_MATH = "not a mathematical function of arrays (memory, devices, streams, I/O, configuration)"
_TRANSFORM = "a function transform: checked as the sweep's own transforms, not as a function"
EXCLUDED = {
    **{f"mx.{n}": _INT_OUT for n in (
        "all", "any", "allclose", "argmax", "argmin", "argpartition", "argsort", "array_equal", "bitwise_and",
        "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
        "count_nonzero", "equal", "greater", "greater_equal", "isclose", "isfinite", "isinf", "isnan",
        "isneginf", "isposinf", "left_shift", "less", "less_equal", "logical_and", "logical_not",
        "logical_or", "logical_xor", "not_equal", "right_shift", "searchsorted", "can_cast", "result_type",
        "isdtype", "issubdtype", "unique")},
    **{f"mx.{n}": _NO_INPUT for n in (
        "arange", "bartlett", "blackman", "empty", "eye", "hamming", "hanning", "identity", "linspace",
        "ones", "tri", "zeros", "broadcast_shapes")},
    "mx.fft.fftfreq": _NO_INPUT, "mx.fft.rfftfreq": _NO_INPUT,
    **{f"mx.{n}": _NOT_MATH for n in (
        "async_eval", "clear_cache", "clear_streams", "default_device", "default_stream", "device_count",
        "device_info", "disable_compile", "enable_compile", "eval", "export_function", "export_to_dot",
        "exporter", "from_dlpack", "get_active_memory", "get_array_buffer_size", "get_cache_memory",
        "get_memory_limit", "get_peak_memory", "get_printoptions", "import_function", "is_available", "load",
        "new_stream", "new_thread_local_stream", "new_thread_unsafe_stream", "printoptions",
        "reset_peak_memory", "save", "save_gguf", "save_safetensors", "savez", "savez_compressed",
        "set_cache_limit", "set_default_device", "set_default_stream", "set_memory_limit",
        "set_printoptions", "set_wired_limit", "stream", "synchronize", "asarray", "view", "empty_like")},
    **{f"mx.{n}": _TRANSFORM for n in ("checkpoint", "compile", "grad", "jvp",
                                       "value_and_grad", "vjp", "vmap")},
    "mx.stop_gradient": "its gradient is zero by definition (a documented cut of the graph)",
    "mx.quantize": "returns integer codes with scales and biases; differentiated through mx.dequantize",
    "mx.to_fp8": "casts to an 8-bit float code (uint8 storage): integer output",
    "mx.from_fp8": "reads 8-bit float codes (uint8 input): nothing to differentiate",
    "mx.qqmm": "quantizes both operands on the fly (mxfp8/nvfp4, GPU kernels): no CPU gradient to compare",
    "mx.gather_qqmm": "quantizes both operands on the fly (mxfp8/nvfp4, GPU kernels): no CPU gradient to compare",
    "mx.einsum_path": "returns a contraction plan (text), not an array",
    "mx.fast.metal_kernel": "builds a user kernel (Metal): no fixed function to check",
    "mx.fast.cuda_kernel": "builds a user kernel (CUDA): no fixed function to check",
    "mx.fast.precompiled_cuda_kernel": "runs a user kernel (CUDA): no fixed function to check",
    "mx.divmod": "returns (quotient, remainder): checked in the catalog (ops/binary.py divmod)",
    **{f"nn.{n}": "needs a distributed group of several processes" for n in (
        "AllToShardedLinear", "ShardedToAllLinear", "QuantizedAllToShardedLinear",
        "QuantizedShardedToAllLinear", "FullyShardedModule")},
    "nn.step": "returns an int32 step (0 or 1): integer output", "nn.Step": "returns an int32 step: integer output",
    "nn.QQLinear": "quantizes its input on the fly (mxfp8/nvfp4, GPU kernels)",
    "nn.QuantizedEmbedding": "integer input and frozen quantized weights: nothing is differentiated",
}
