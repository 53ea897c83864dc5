"""rope: mx.fast.rope(x, dims, traditional=, base=, scale=, offset=, freqs=).

x has shape (B, ..., T, D). Position t of batch item b sits at
p = (t + offset[b]) * scale (offset an int, a scalar array or one per batch
item); the first `dims` features are rotated in pairs by theta_i = p * f_i,
with f_i = base^(-i / (dims/2)) or f_i = 1 / freqs[i]; features past `dims`
pass through. The pairs are (i, i + dims/2), or (2i, 2i + 1) when
`traditional`. Each pair (a, c) becomes (a cos - c sin, a sin + c cos).

The op is linear in x, and the reverse rule is the inverse rotation: each
pair's cotangent (ga, gc) goes back as (ga cos + gc sin, -ga sin + gc cos),
untouched past `dims`. RoPE::vjp in mlx/fast.cpp builds it by calling the
kernel again with `forward` flipped, reusing offset and freqs: a rule that
rests on the flag, the pairing and the offset all being carried over. On CPU
(RoPE::use_fallback) MLX differentiates its composed fallback instead. The
offset is an integer operand and freqs a fixed, optional one (present
exactly when params["base"] is None): RoPE::vjp refuses gradients for
either. params["offset_form"] says how the offset is passed: "int" (a Python
int), "array" (a 0-d array), "vector" (one per batch item). The MLX call is
ops/repro/rope.py.

Float32 rounding: |x| <= 4 and positions p <= 8, so the float32 angle (exact for
dyadic freqs, one exp rounding for a base) is off by < 3e-6 rad and outputs by
< 1.5e-5 in the worst corner; typical errors are ~1e-6 against the 3e-5 band.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import integer_tensor, seeded_ints, tensor
from ._support import fast
from ._support import expression as E

OFFSET_FORMS = ("int", "array", "vector")   # python int, 0-d array, one offset per batch item


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def pairs(dims: int, traditional: bool) -> list:
    """The feature index pairs (a, c) rotated together, in frequency order."""
    half = dims // 2
    return [(2 * i, 2 * i + 1) if traditional else (i, i + half) for i in range(half)]


def angles(shape, offset, params, freqs) -> np.ndarray:
    """theta[b, t, i] broadcast to x's rank: shape (B, 1, ..., 1, T, dims/2)."""
    B, T, half = shape[0], shape[-2], params["dims"] // 2
    off = np.broadcast_to(np.asarray(offset, dtype=np.int64).reshape(-1), (B,)).astype(np.float64)
    p = (np.arange(T)[None, :] + off[:, None]) * float(params["scale"])
    if params.get("base") is None:
        inv = 1.0 / _f64(freqs).reshape(-1)
    else:
        inv = float(params["base"]) ** (-np.arange(half) / half)
    theta = p[:, :, None] * inv[None, None, :]
    return theta.reshape((B,) + (1,) * (len(shape) - 3) + (T, half))


def _rotate(v, theta, params, sign):
    """Rotate each pair of v's last axis by sign * theta."""
    out = _f64(v).copy()
    cos, sin = np.cos(theta), sign * np.sin(theta)
    for i, (a, c) in enumerate(pairs(params["dims"], params["traditional"])):
        va, vc = _f64(v)[..., a], _f64(v)[..., c]
        out[..., a] = va * cos[..., i] - vc * sin[..., i]
        out[..., c] = va * sin[..., i] + vc * cos[..., i]
    return out


# --- float64 reference ---------------------------------------------------------------------

def reference(inp, params):
    x = _f64(inp["x"])
    return _rotate(x, angles(x.shape, inp["offset"], params, inp.get("freqs")), params, 1.0)


def reference_vjp(inp, g, params):
    """The transpose of a rotation is the rotation by -theta."""
    x = _f64(inp["x"])
    return {"x": _rotate(g, angles(x.shape, inp["offset"], params, inp.get("freqs")), params, -1.0)}


# --- catalog ---------------------------------------------------------------------------------

def _params(dims, traditional, base=10000.0, scale=1.0, form="int"):
    return {"dims": dims, "traditional": traditional, "base": base, "scale": scale, "offset_form": form}


def _operands(x, offset, freqs) -> dict:
    """x, freqs (only when given) and offset, in call order."""
    freqs = {} if freqs is None else {"freqs": freqs}
    return dict({"x": x}, **freqs, offset=integer_tensor(offset, "int32"))


def _case(name, x, params, offset=2, freqs=None, cot=None, desc=""):
    return Scenario(name=f"rope/{name}", op="rope",
                    operands=_operands(x, offset, None if freqs is None else tensor(freqs)),
                    wrt=("x",), params=params, cotangent=cot, family="rope", description=desc)


def scenarios() -> list:
    shape = (2, 2, 3, 6)   # B, heads, T, D
    x, cot = tensor(seeded_ints(shape, 90, -3, 4)), tensor(seeded_ints(shape, 91, -3, 4))
    out = []
    for trad in (False, True):
        mode = "traditional" if trad else "halves"
        out += [
            _case(f"{mode}/base", x, _params(6, trad), cot=cot),
            _case(f"{mode}/freqs", x, _params(6, trad, base=None), freqs=[1.0, 2.0, 0.5], cot=cot,
                  desc="explicit frequencies instead of a base"),
            _case(f"{mode}/partial_dims", x, _params(4, trad, base=100.0), cot=cot,
                  desc="dims 4 of 6: the last two features pass through"),
            _case(f"{mode}/offset_vector", x, _params(6, trad, form="vector"), offset=[1, 3], cot=cot,
                  desc="one offset per batch item"),
        ]
    out += [
        _case("offset_array_scalar", x, _params(6, False, form="array"), offset=3, cot=cot),
        _case("offset_zero", x, _params(6, True), offset=0, cot=cot,
              desc="position 0 is not rotated: only later positions tell the directions apart"),
        _case("offset_negative", x, _params(6, False, form="vector"), offset=[-2, 1], cot=cot),
        _case("scale_half", x, _params(6, False, base=10.0, scale=0.5), offset=1, cot=cot),
        _case("partial_freqs", x, _params(2, True, base=None), freqs=[0.5], cot=cot),
        _case("rank3", tensor(seeded_ints((2, 3, 4), 92, -3, 4)), _params(4, False, form="vector"),
              offset=[0, 2], cot=tensor(seeded_ints((2, 3, 4), 93, -3, 4)),
              desc="(B, T, D): no head axis"),
        _case("rank5", tensor(seeded_ints((2, 2, 1, 3, 4), 94, -3, 4)), _params(4, True, form="vector"),
              offset=[2, 1], cot=tensor(seeded_ints((2, 2, 1, 3, 4), 95, -3, 4)),
              desc="two middle axes, flattened by MLX"),
        _case("transposed", tensor(seeded_ints((2, 2, 6, 3), 96, -3, 4),
                                   views=[{"op": "transpose", "axes": [0, 1, 3, 2]}]),
              _params(6, False), cot=cot, desc="stored with T and D swapped"),
        _case("strided", tensor(np.arange(144) % 7 - 3, (2, 2, 3, 12),
                                views=[{"op": "slice", "index": [[0, 2], [0, 2], [0, 3], [0, 12, 2]]}]),
              _params(6, True), cot=cot, desc="every other feature of a wider buffer"),
    ]
    return out


# --- fuzz strategy -------------------------------------------------------------------------

BASES = (10000.0, None, 10.0)      # None: explicit frequencies
SCALES = (1.0, 0.5, 0.25)
FREQS = (1.0, 2.0, 0.5, 4.0)       # dyadic: 1/f and p/f are exact in float32


def _offset(draw, B, form):
    if form == "vector":
        return [draw(D.irange(0, 3)) for _ in range(B)]
    return draw(D.irange(0, 3))


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = fast.FUZZ_DTYPE   # whatever the campaign offers: see fast.FUZZ_DTYPE
    B, T = draw(D.irange(1, 3)), draw(D.irange(1, 3))
    mid = tuple(draw(D.irange(1, 2)) for _ in range(draw(D.choice((1, 0, 2)))))
    half = draw(D.irange(1, 3))
    Dfeat = 2 * half + draw(D.irange(0, 2))
    shape = (B,) + mid + (T, Dfeat)
    x = D.layout(draw, shape[:-2], shape[-2:], draw(D.irange(0, 2**16)), dtype, -3, 4)
    base, form = draw(D.choice(BASES)), draw(D.choice(OFFSET_FORMS))
    scale = draw(D.choice(SCALES))
    freqs = D.tensor([draw(D.choice(FREQS)) for _ in range(half)], dtype=dtype) if base is None else None
    params = {"dims": 2 * half, "traditional": draw(D.choice((False, True))), "base": base,
              "scale": scale, "offset_form": form}
    cot, mode = D.cotangent(draw, shape, dtype)
    operands = _operands(x, _offset(draw, B, form), freqs)
    return D.finish(Scenario(name="", op="rope", operands=operands, wrt=("x",), params=params,
                             cotangent=cot, family="rope",
                             description=f"generated: shape {list(shape)}, cotangent {mode}"))


def call_expression(params, names) -> str:
    """The one rope call: the offset a Python int, or an int32 array (0-d or a vector)."""
    off = names["offset"]
    offset = f"int({off})" if params["offset_form"] == "int" else E.index(off, "int32")
    freqs = {"freqs": names["freqs"]} if "freqs" in names else {}
    return E.call("mx.fast.rope", names["x"], E.lit(params["dims"]), traditional=E.lit(params["traditional"]),
                  base=E.lit(params["base"]), scale=E.lit(params["scale"]), offset=offset, **freqs)


OPS = (OpInfo(
    name="rope",
    summary="mx.fast.rope (RoPE): traditional, int/array offsets, base or freqs, partial dims, scale",
    operands=("x", "freqs", "offset"), differentiable=("x",), integer_operands=("offset",),
    optional_operands=("freqs",), reference=reference, reference_vjp=reference_vjp,
    rule="each rotated pair (a, c) at angle theta = (t + offset) scale f_i goes back as "
         "(ga cos + gc sin, gc cos - ga sin): the rotation by -theta; features past dims pass g through",
    mlx_call=".ops.repro.rope:mlx_call", call_expression=call_expression,
    # RoPE on the GPU; on the CPU MLX composes it from the primitives listed after it
    primitives=("RoPE", "Add", "Concatenate", "ExpandDims", "Flatten", "Multiply", "Reshape", "Slice",
                "Subtract"), dtypes=("float32", "float16", "bfloat16"), complex=False,
    scenarios=scenarios, strategy=fuzz_case),)
