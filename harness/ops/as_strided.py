"""as_strided: mx.as_strided(a, shape, strides, offset), MLX's AsStrided primitive.

MLX reads `a` as if it were row-contiguous whatever its storage: output position p
holds a.ravel()[offset + sum(p_i * strides_i)]. Overlapping windows (one element
feeding several outputs), stride 0 (broadcast), negative strides (with an offset
that keeps every address inside a) and gaps (elements no output reads) are all
allowed; params["strides"] None means row-major strides of `shape` (a reshape).

What is claimed (out is linear in a): d a[k] = the sum of g over every output
position that reads element k, and exactly 0 for elements nothing reads.
AsStrided::vjp builds this by as_strided-ing an arange of flat positions and
scatter-adding the cotangent there.

Not a gradient matter: despite the documented "as if row contiguous", a view
that flattens without a copy yet is not row-contiguous (x[::2]; a 2-D view whose
last axis has step 2 and whose rows are evenly spaced; some stride-0 batch
broadcasts) makes the forward raise "AsStrided must be used with row contiguous
arrays only". The fuzzer's layouts draw such views; the engine counts those cases
as rejected by the forward, not as findings. The catalog's layouts are copied by
the flatten (transposed) or row-contiguous (a window of whole rows).
The MLX call is ops/repro/as_strided.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, tensor
from ._support import expression as E
from ._support.complex_parts import complex_op


def strides_of(params) -> list:
    if params.get("strides") is not None:
        return list(params["strides"])
    out, step = [], 1
    for d in reversed(params["shape"]):
        out.insert(0, step)
        step *= d
    return out


def addresses(size, params) -> np.ndarray:
    """Flat position in a that each output element reads (output shape)."""
    shape, strides, off = tuple(params["shape"]), strides_of(params), int(params.get("offset", 0))
    out = np.full(shape, off, dtype=np.int64)
    for axis, (n, s) in enumerate(zip(shape, strides)):
        out += (np.arange(n) * s).reshape((n,) + (1,) * (len(shape) - axis - 1))
    if out.size and (out.min() < 0 or out.max() >= size):
        raise ValueError(f"as_strided reads positions {out.min()}..{out.max()} of {size} elements")
    return out


def reference(inp, params):
    a = np.asarray(inp["a"], dtype=np.float64)
    return a.ravel()[addresses(a.size, params)]


def reference_vjp(inp, g, params):
    a, g = np.asarray(inp["a"], dtype=np.float64), np.asarray(g, dtype=np.float64)
    da = np.zeros(a.size)
    for k, x in zip(addresses(a.size, params).ravel().tolist(), g.ravel().tolist()):
        da[k] += x
    return {"a": da.reshape(a.shape)}


# --- catalog ---------------------------------------------------------------------------------------

def _case(name, a, shape, strides, offset=0, seed=0, desc=""):
    if not hasattr(a, "views"):
        a = tensor(np.random.RandomState(230 + seed).randint(-4, 5, size=a))
    cot = tensor(np.random.RandomState(240 + seed).randint(-4, 5, size=shape))
    return Scenario(name=f"as_strided/{name}", op="as_strided", operands={"a": a}, wrt=("a",),
                    params={"shape": shape, "strides": strides, "offset": offset}, cotangent=cot,
                    fd_step=1.0 / 16, family="as_strided", description=desc)


def scenarios() -> list:
    transposed = tensor(np.random.RandomState(250).randint(-4, 5, size=(3, 4)),
                        views=[{"op": "transpose", "axes": [1, 0]}])
    store = 50.0 + np.arange(24.0).reshape(6, 4)
    store[1:4] = np.random.RandomState(251).randint(-4, 5, size=(3, 4))
    window = tensor(store, views=[{"op": "slice", "index": [[1, 4], [0, 4]]}])
    return [
        _case("sliding_1d", (6,), [4, 3], [1, 1],
              desc="windows of 3 at step 1: inner elements feed three outputs"),
        _case("patches_2d", (4, 5), [3, 4, 2, 2], [5, 1, 5, 1], seed=1,
              desc="every 2x2 patch of a 4x5 array"),
        _case("broadcast_stride0", (4,), [3, 4], [0, 1], seed=2, desc="stride 0: each row reads all of a"),
        _case("offset_gaps", (10,), [3, 2], [3, 1], offset=1, seed=3,
              desc="elements 0, 3, 6, 9 are never read: their gradient is exactly 0"),
        _case("reversed", (6,), [5], [-1], offset=4, seed=4, desc="negative stride from offset 4"),
        _case("reversed_windows", (3, 3), [3, 3], [-2, 1], offset=6, seed=5),
        _case("default_strides", (3, 4), [2, 6], None, seed=6, desc="strides omitted: a reshape"),
        _case("transposed_input", transposed, [3, 2], [1, 1], offset=1, seed=7,
              desc="a stored transposed: MLX must read it in logical row-major order"),
        _case("window_of_buffer", window, [4, 3], [2, 1], offset=1, seed=8,
              desc="a: rows 1..3 of a larger buffer whose other rows hold 50+"),
    ]


# --- fuzz strategy ------------------------------------------------------------------------------------

def _fit(shape, strides, size):
    """Shrink dims until the addresses span at most size - 1."""
    shape = list(shape)
    while sum(abs(s) * (d - 1) for d, s in zip(shape, strides)) > size - 1:
        k = max(range(len(shape)), key=lambda i: abs(strides[i]) * (shape[i] - 1))
        shape[k] -= 1
    return shape


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    a_shape = tuple(draw(D.irange(1, 5)) for _ in range(draw(D.irange(1, 3))))
    size = int(np.prod(a_shape))
    rank = draw(D.irange(1, 3))
    strides = [draw(D.irange(-2, 3)) for _ in range(rank)]
    shape = _fit([draw(D.irange(1, 4)) for _ in range(rank)], strides, size)
    low = -sum(min(0, s * (d - 1)) for d, s in zip(shape, strides))
    high = size - 1 - sum(max(0, s * (d - 1)) for d, s in zip(shape, strides))
    offset = draw(D.irange(low, high))
    seed = draw(D.irange(0, 2**16))
    a = D.layout(draw, a_shape[:-2], a_shape[-2:], seed, dtype) if len(a_shape) >= 2 else \
        tensor(hashed_ints(a_shape, seed), dtype=dtype)
    cot, cmode = D.cotangent(draw, tuple(shape), dtype)
    return D.finish(Scenario(name="", op="as_strided", operands={"a": a}, wrt=("a",), cotangent=cot,
                             params={"shape": shape, "strides": strides, "offset": offset},
                             family="as_strided",
                             description=f"generated: a{a_shape} shape {shape} strides {strides} "
                                         f"offset {offset}, cotangent {cmode}"))


def call_expression(params, names) -> str:
    strides = params.get("strides")
    return E.call("mx.as_strided", names["a"], E.lit(list(params["shape"])),
                  E.lit(None if strides is None else list(strides)), E.lit(int(params.get("offset", 0))))


OPS = (complex_op(OpInfo(
    name="as_strided", summary="mx.as_strided: overlapping windows, stride 0, negative strides, gaps",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp, exact=True,
    multilinear=True,
    rule="out[p] = a.ravel()[offset + sum of p_i strides_i]; d a[k] = sum of g over every output position "
         "that reads element k, exactly 0 where none does",
    mlx_call=".ops.repro.as_strided:mlx_call", call_expression=call_expression,
    primitives=("AsStrided", "Flatten"),
    dtypes=("float32", "float16", "bfloat16"), complex=False, vmap=False,   # no vmap in MLX
    scenarios=scenarios, strategy=fuzz_case)),)
