"""conv_general: mx.conv_general(x, w, stride, (pad_lo, pad_hi), kernel_dilation,
input_dilation, groups, flip), MLX's Convolution primitive, 1-D and 2-D.

x is (N, *spatial, C_in), w is (C_out, *kernel, C_in / groups). Per spatial
axis, output position o and kernel tap k read the input at dilated position
q = o * stride + t * kernel_dilation - pad_lo with t = K - 1 - k when flipped
(a true convolution) and t = k otherwise; q lands on input element q /
input_dilation when it divides and is in range, else on padding or a hole.
Output channel c of group c // (C_out / groups) reads only that group's input
channels. The reverse rule is the same enumeration read backwards:
dx[q] += g[o] w[k], dw[k] += g[o] x[q]. Convolution::vjp instead builds two
further convolutions with swapped strides and dilations, recomputed padding,
a group transpose and a flip: each of those is a place where it can go wrong.

The MLX call is ops/repro/conv_general.py.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo, tag_by_rules
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints, tensor
from ._support import expression as E

# --- float64 reference ---------------------------------------------------------------------

KEYS = ("stride", "pad_lo", "pad_hi", "kernel_dilation", "input_dilation")


def geometry(params, dims) -> dict:
    """Per-axis parameters as lists of length `dims` (a scalar applies to every axis)."""
    out = {}
    for key, default in zip(KEYS, (1, 0, 0, 1, 1)):
        v = params.get(key, default)
        out[key] = [int(v)] * dims if np.isscalar(v) else [int(u) for u in v]
    out["groups"], out["flip"] = int(params.get("groups", 1)), bool(params.get("flip", False))
    return out


def out_size(n, k, stride, lo, hi, kdil, idil) -> int:
    span_in, span_k = (n - 1) * idil + 1, (k - 1) * kdil + 1
    return (span_in + lo + hi - span_k) // stride + 1


def taps(n, k, geo, axis) -> list:
    """(output position, kernel tap, input position) triples along one axis."""
    s, lo, kd, idl = (geo[key][axis] for key in ("stride", "pad_lo", "kernel_dilation", "input_dilation"))
    out = []
    for o in range(out_size(n, k, s, lo, geo["pad_hi"][axis], kd, idl)):
        for t in range(k):
            q = o * s + t * kd - lo
            if q % idl == 0 and 0 <= q // idl < n:
                out.append((o, k - 1 - t if geo["flip"] else t, q // idl))
    return out


def _pairs(x_shape, w_shape, geo):
    """Every (output index, kernel index, input index) over all spatial axes."""
    dims = len(x_shape) - 2
    per_axis = [taps(x_shape[1 + d], w_shape[1 + d], geo, d) for d in range(dims)]
    for combo in itertools.product(*per_axis):
        yield tuple(c[0] for c in combo), tuple(c[1] for c in combo), tuple(c[2] for c in combo)


def _spatial_out(x_shape, w_shape, geo) -> tuple:
    return tuple(out_size(x_shape[1 + d], w_shape[1 + d], geo["stride"][d], geo["pad_lo"][d],
                          geo["pad_hi"][d], geo["kernel_dilation"][d], geo["input_dilation"][d])
                 for d in range(len(x_shape) - 2))


def _grouped(w, G):
    """w[c_out, ..., ci] as [G, C_out / G, ..., ci]."""
    return w.reshape((G, w.shape[0] // G) + w.shape[1:])


def reference(inp, params):
    x, w = np.asarray(inp["x"], dtype=np.float64), np.asarray(inp["w"], dtype=np.float64)
    geo = geometry(params, x.ndim - 2)
    G, N = geo["groups"], x.shape[0]
    y = np.zeros((N,) + _spatial_out(x.shape, w.shape, geo) + (w.shape[0],))
    wg = _grouped(w, G)
    for o, k, q in _pairs(x.shape, w.shape, geo):
        xs = x[(slice(None),) + q].reshape(N, G, -1)            # (N, G, C_in / G)
        y[(slice(None),) + o] += np.einsum("ngc,goc->ngo", xs, wg[(slice(None), slice(None)) + k]).reshape(N, -1)
    return y


def reference_vjp(inp, g, params):
    x, w = np.asarray(inp["x"], dtype=np.float64), np.asarray(inp["w"], dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    geo = geometry(params, x.ndim - 2)
    G, N = geo["groups"], x.shape[0]
    dx, dw = np.zeros(x.shape), np.zeros(w.shape)
    wg, dwg = _grouped(w, G), _grouped(dw, G)   # dwg is a view of dw
    for o, k, q in _pairs(x.shape, w.shape, geo):
        go = g[(slice(None),) + o].reshape(N, G, -1)            # (N, G, C_out / G)
        wk = wg[(slice(None), slice(None)) + k]                  # (G, C_out / G, C_in / G)
        dx[(slice(None),) + q] += np.einsum("ngo,goc->ngc", go, wk).reshape(N, -1)
        xs = x[(slice(None),) + q].reshape(N, G, -1)
        dwg[(slice(None), slice(None)) + k] += np.einsum("ngo,ngc->goc", go, xs)
    return {"x": dx, "w": dw}


# --- catalog -----------------------------------------------------------------------------------

# Defect classes (MLX 0.32.4), all with input dilation or a strided general weight path:
DX_SHAPE = "dilated_input_dx_shape"      # input_dilation > 1 and a padding side >= the kernel span:
                                         # dx comes back shorter than x
DW_SHAPE = "strided_dw_shape"            # stride > 1 on the general weight path (input or kernel
                                         # dilation, flip, groups) with windows that skip the
                                         # input's tail: dw comes back the wrong length
VJP_RAISES = "dilated_input_vjp_raises"  # input_dilation > 1, stride > 1 and padding: the VJP raises
# Found by the vmap oracle: without dilations, flip or groups, dw comes from
# conv_weight_backward_patches, which cuts the padded input into windows with as_strided;
# AsStrided has no vmap rule, so the mapped VJP raises while the mapped forward works
# (tagged by rule, `on_patches_path`, wherever w is differentiated on that path).
VMAP_AS_STRIDED = "vmap_as_strided"
# Found by the fuzzer (w differentiated alone, groups 3): Convolution::vmap with only w batched
# flattens the batch into w's output channels batch-major, so a grouped convolution's groups
# each take channels of several batch elements; the forward mapped over w alone and the
# mapped weight VJP (the cotangent batched) are wrong.
VMAP_GROUPED = "vmap_grouped_weights"
# dilated_input_dx_shape met by the VJP of a VJP (the dx of a strided call is a convolution
# with input dilation): only the second-order oracle shows it, hence a class of its own.
DX_SHAPE_SECOND = "dilated_input_dx_shape_second_order"


def conv(name, x_shape, w_shape, seed, wrt=("x", "w"), fd=False, desc="", tags=(), **params) -> Scenario:
    x = tensor(seeded_ints(x_shape, seed))
    w = tensor(seeded_ints(w_shape, seed + 1))
    geo = geometry(params, len(x_shape) - 2)
    out = (x_shape[0],) + _spatial_out(x_shape, w_shape, geo) + (w_shape[0],)
    cot = tensor(seeded_ints(out, seed + 2))
    return Scenario(name=f"conv_general/{name}", op="conv_general", operands={"x": x, "w": w},
                    wrt=tuple(wrt), cotangent=cot, params=params, fd_step=1.0 / 16 if fd else None,
                    family=f"conv{len(x_shape) - 2}d", defect_tags=tuple(tags), description=desc)


def _one_d() -> list:
    x, w = (2, 7, 2), (3, 3, 2)
    return [
        conv("1d/plain", x, w, 300, fd=True),
        conv("1d/stride2", x, w, 303, stride=2),
        conv("1d/stride3_remainder", (2, 8, 2), w, 306, stride=3, tags=(DX_SHAPE_SECOND,),
             desc="the last input columns reach no output; second order meets dilated_input_dx_shape: "
                  "dx is a convolution with input dilation 3, padding (2, 4), whose own dx comes back "
                  "(2, 0, 3) instead of (2, 2, 3)"),
        conv("1d/kernel_dilation2", x, w, 309, kernel_dilation=2),
        conv("1d/input_dilation2", x, w, 312, input_dilation=2),
        conv("1d/pad_0_2", x, w, 315, pad_lo=0, pad_hi=2, desc="asymmetric padding"),
        conv("1d/pad_2_0", x, w, 318, pad_lo=2, pad_hi=0),
        conv("1d/pad_1_3_stride2", x, w, 321, pad_lo=1, pad_hi=3, stride=2),
        conv("1d/flip", x, w, 324, flip=True, fd=True),
        conv("1d/flip_pad_2_1", x, w, 327, flip=True, pad_lo=2, pad_hi=1),
        conv("1d/groups2", (2, 7, 4), (4, 3, 2), 330, groups=2),
        conv("1d/depthwise", (2, 6, 3), (3, 2, 1), 333, groups=3, desc="groups = C_in = C_out"),
        conv("1d/groups2_out6", (1, 6, 4), (6, 2, 2), 336, groups=2, desc="three output channels per group"),
        conv("1d/flip_groups2", (2, 7, 4), (4, 3, 2), 339, flip=True, groups=2),
        conv("1d/flip_kdil2_stride2", (2, 9, 2), w, 342, flip=True, kernel_dilation=2, stride=2),
        conv("1d/idil2_kdil2_pad_1_2", x, w, 345, input_dilation=2, kernel_dilation=2, pad_lo=1, pad_hi=2),
        conv("1d/groups2_idil2_stride2", (2, 5, 4), (2, 2, 2), 348, groups=2, input_dilation=2, stride=2,
             tags=(DW_SHAPE,)),
        conv("1d/everything", (2, 6, 4), (4, 2, 2), 351, stride=2, pad_lo=2, pad_hi=1, kernel_dilation=2,
             input_dilation=2, groups=2, flip=True, fd=True),
        conv("1d/kernel_wider_than_input", (1, 2, 1), (2, 4, 1), 354, pad_lo=2, pad_hi=2),
        conv("1d/wrt_x", x, w, 357, wrt=("x",), stride=2, pad_lo=0, pad_hi=1),
        conv("1d/wrt_w", x, w, 360, wrt=("w",), kernel_dilation=2, groups=1, flip=True),
        conv("1d/wrt_w_groups2", (2, 7, 4), (4, 3, 2), 363, wrt=("w",), groups=2,
             desc="w alone differentiated, grouped: vmap maps w (and the cotangent) but not x"),
        conv("1d/wrt_w_depthwise", (2, 6, 3), (3, 2, 1), 366, wrt=("w",), groups=3),
    ]


def _two_d() -> list:
    x, w = (2, 5, 4, 2), (2, 3, 2, 2)
    return [
        conv("2d/plain", x, w, 400, fd=True),
        conv("2d/stride_2_1", x, w, 403, stride=[2, 1]),
        conv("2d/pad_asym", x, w, 406, pad_lo=[0, 2], pad_hi=[1, 0]),
        conv("2d/kdil_1_2", x, w, 409, kernel_dilation=[1, 2], pad_lo=1, pad_hi=1),
        conv("2d/idil_2_1", x, w, 412, input_dilation=[2, 1]),
        conv("2d/flip", x, w, 415, flip=True),
        conv("2d/groups2", (1, 4, 4, 4), (4, 2, 2, 2), 418, groups=2),
        conv("2d/flip_groups2_stride2", (1, 5, 5, 4), (2, 2, 3, 2), 421, flip=True, groups=2, stride=2,
             pad_lo=[1, 0], pad_hi=[0, 2]),
        conv("2d/everything", (2, 4, 3, 4), (4, 2, 2, 2), 424, stride=[2, 1], pad_lo=[1, 2], pad_hi=[2, 0],
             kernel_dilation=[2, 1], input_dilation=[1, 2], groups=2, flip=True, tags=(DX_SHAPE,)),
        conv("2d/idil_2_2_pad_1", x, w, 427, input_dilation=2, pad_lo=1, pad_hi=1,
             desc="input dilation with padding below the kernel span: the control for dilated_input_dx_shape"),
    ]


def _defects() -> list:
    """Minimal-ish cases of the three classes; each is expected to fail."""
    return [
        conv(f"{DX_SHAPE}/1d", (2, 4, 2), (3, 1, 2), 500, input_dilation=2, pad_lo=0, pad_hi=1, tags=(DX_SHAPE,),
             desc="kernel span 1, pad_hi 1: dx has 3 positions, not 4"),
        conv(f"{DX_SHAPE}/1d_pad_lo", (1, 3, 1), (1, 2, 1), 503, input_dilation=2, pad_lo=2, pad_hi=0,
             wrt=("x",), tags=(DX_SHAPE,)),
        conv(f"{DX_SHAPE}/2d", (1, 3, 3, 1), (2, 1, 1, 1), 506, input_dilation=[1, 2], pad_lo=[0, 0],
             pad_hi=[0, 1], tags=(DX_SHAPE,)),
        conv(f"{DW_SHAPE}/1d_input_dilation", (2, 2, 1), (2, 2, 1), 509, input_dilation=2, stride=2,
             tags=(DW_SHAPE,), desc="dilated input [x0, 0, x1], one window: dw = [g x0, 0]"),
        conv(f"{DW_SHAPE}/1d_flip", (2, 1, 2), (2, 1, 2), 512, stride=3, pad_lo=2, flip=True, wrt=("w",),
             tags=(DW_SHAPE,), desc="no dilation: flip takes the general weight path"),
        conv(f"{DW_SHAPE}/2d", (1, 2, 2, 1), (1, 2, 1, 1), 515, input_dilation=[2, 1], stride=[2, 1],
             wrt=("w",), tags=(DW_SHAPE,)),
        conv(f"{VJP_RAISES}/1d", (1, 1, 1), (1, 1, 1), 518, input_dilation=2, stride=2, pad_lo=1,
             tags=(VJP_RAISES,), desc="the single output reads padding: every gradient is 0"),
        conv(f"{VJP_RAISES}/1d_wider", (2, 3, 2), (2, 1, 2), 521, input_dilation=2, stride=3, pad_lo=1,
             pad_hi=0, tags=(VJP_RAISES,)),
    ]


def scenarios() -> list:
    return [tag_by_rules(s, DEFECTS) for s in _one_d() + _two_d() + _defects()]


def grouped_weights_alone(s: Scenario) -> bool:
    """VMAP_GROUPED's rule: a grouped convolution whose w is differentiated without x (the
    vmap oracle then maps w and the cotangent, not x)."""
    return int(s.params.get("groups", 1)) > 1 and "w" in s.wrt and "x" not in s.wrt


def on_patches_path(s: Scenario) -> bool:
    """VMAP_AS_STRIDED's rule: w differentiated on the patches path (no dilation, flip or groups)."""
    geo = geometry(s.params, len(s.operands["x"].shape) - 2)
    patches = (set(geo["input_dilation"]) == set(geo["kernel_dilation"]) == {1} and not geo["flip"]
               and geo["groups"] == 1)
    return patches and "w" in s.wrt and s.objective == "vjp"


DEFECTS = (
    KnownDefect(DX_SHAPE),
    KnownDefect(VJP_RAISES),
    KnownDefect(DW_SHAPE),
    KnownDefect(VMAP_AS_STRIDED, revealed_by="vmap", rule=on_patches_path),
    KnownDefect(DX_SHAPE_SECOND, revealed_by="second_order"),
    KnownDefect(VMAP_GROUPED, revealed_by="vmap", rule=lambda s: grouped_weights_alone(s)),
)


# --- fuzz strategy -------------------------------------------------------------------------

def _axis(draw) -> dict:
    """One spatial axis; padding grows when the kernel would not fit (shrinks to the plain case)."""
    n, k = draw(D.irange(1, 6)), draw(D.irange(1, 3))
    p = {"stride": draw(D.irange(1, 3)), "kernel_dilation": draw(D.irange(1, 2)),
         "input_dilation": draw(D.irange(1, 2)), "pad_lo": draw(D.irange(0, 2)), "pad_hi": draw(D.irange(0, 2))}
    short = (k - 1) * p["kernel_dilation"] + 1 - ((n - 1) * p["input_dilation"] + 1 + p["pad_lo"] + p["pad_hi"])
    p["pad_hi"] += max(short, 0)
    return dict(p, n=n, k=k)


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    dims = draw(D.irange(1, 2))
    axes = [_axis(draw) for _ in range(dims)]
    G, cg, co = draw(D.irange(1, 3)), draw(D.irange(1, 2)), draw(D.irange(1, 2))
    N = draw(D.irange(1, 2))
    flip = draw(D.choice((False, True)))
    small = dict(lo=-1, hi=2) if dtype != "float32" else {}   # half precision: sums stay below 256
    seed = draw(D.irange(0, 2**16))
    xs = (N,) + tuple(a["n"] for a in axes) + (G * cg,)
    ws = (G * co,) + tuple(a["k"] for a in axes) + (cg,)
    x = D.layout(draw, xs[:-2], xs[-2:], seed, dtype, **small)
    w = D.layout(draw, ws[:-2], ws[-2:], seed + 1, dtype, **small)
    params = {key: [a[key] for a in axes] for key in KEYS}
    params.update(groups=G, flip=flip)
    out = (N,) + _spatial_out(xs, ws, geometry(params, dims)) + (G * co,)
    cot, mode = D.cotangent(draw, out, dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("x", "w")))))
    return D.finish(Scenario(name="", op="conv_general", operands={"x": x, "w": w}, wrt=wrt,
                             cotangent=cot, params=params, family=f"conv{dims}d",
                             description=f"generated: x {xs}, w {ws}, cotangent {mode}"))


def call_expression(params, names) -> str:
    """The one conv_general call. A scalar param applies to every spatial axis: MLX repeats an int
    over them itself; unequal scalar paddings are written per axis, x.ndim - 2 of them."""
    x = names["x"]

    def axes(key, default):
        v = params.get(key, default)
        return E.lit(v if isinstance(v, int) else list(v))

    lo, hi = params.get("pad_lo", 0), params.get("pad_hi", 0)
    if isinstance(lo, int) and isinstance(hi, int):
        padding = E.lit(lo) if lo == hi else f"([{lo}] * ({x}.ndim - 2), [{hi}] * ({x}.ndim - 2))"
    else:
        padding = "(" + ", ".join(E.lit(list(v)) if not isinstance(v, int) else f"[{v}] * ({x}.ndim - 2)"
                                  for v in (lo, hi)) + ")"
    return E.call("mx.conv_general", x, names["w"], stride=axes("stride", 1), padding=padding,
                  kernel_dilation=axes("kernel_dilation", 1), input_dilation=axes("input_dilation", 1),
                  groups=E.lit(params.get("groups", 1)), flip=E.lit(params.get("flip", False)))


OPS = (OpInfo(
    name="conv_general", known_defects=DEFECTS,
    summary="mx.conv_general (Convolution): strides, dilations, groups, flip, asymmetric padding, 1-D/2-D",
    operands=("x", "w"), differentiable=("x", "w"), reference=reference, reference_vjp=reference_vjp,
    exact=True, multilinear=True,
    rule="for every output o, kernel tap k and the input element q they meet (stride, padding, both "
         "dilations, flip, the output channel's group): dx[q] += g[o] w[k], dw[k] += g[o] x[q]",
    mlx_call=".ops.repro.conv_general:mlx_call", call_expression=call_expression,
    primitives=("Convolution",), dtypes=("float32", "float16", "bfloat16"), complex=False,
    scenarios=scenarios, strategy=fuzz_case),)
