"""The FFTs, one table: mx.fft.fft, ifft, rfft, irfft (n, axis, norm) and fft2, fftn,
ifftn, rfftn, irfftn (s, axes, norm); MLX's FFT primitive, with Slice or
SliceUpdate where n (s) truncates or pads and AsType where a real input is
made complex (Multiply for the "ortho" and "forward" scalings).

Complex outputs are judged as they are: the objective is MLX's real pairing
L = Re sum(conj(g) * y) with a complex cotangent g (running/execute.py), whose
gradient MLX packs as dL/dRe x + i dL/dIm x; for a real input x it is the
real gradient alone. So rfft takes a real operand to a complex output, irfft
a complex operand to a real one (its cotangent is real), fft of a real operand
is judged with its real gradient, and nothing is first reduced to a real
number by hand.

Every FFT is real-linear in its operand, so the reference VJP is exact: the
pairing of g with the reference's forward on each unit input
(_support/linear.py). numpy's np.fft is the forward, with the same
conventions as MLX (norm "backward" scales the inverse by 1/n, "ortho" both by
1/sqrt(n), "forward" the forward by 1/n; irfft ignores the imaginary parts of
the zero and Nyquist bins; n and s truncate or zero-pad the input). FFT::vjp
rebuilds these from an inverse transform, a 1/n or n factor and, for the real
transforms, a mask halving or doubling the bins a real signal uses twice:
the cases that exercise it are odd and even lengths, padding, truncation,
every norm, several axes, and non-contiguous operands. The MLX calls are
ops/repro/fft.py, one function per op.

Complex input to rfft and rfftn: MLX documents that a complex array "will be
silently cast to a real type" (mx.fft.rfft's docstring), and 0.32.4 does so
(AsType keeps the real part). The reference transforms the real part, so the
map is still real-linear and the reference VJP is the real gradient with a
zero imaginary part (what MLX returns); each has complex rows like the other
FFTs, and the strategies draw complex64 for them too.

Known defect (MLX 0.32.4, forward mode only): FFT::jvp calls irfftn without the
output length, which then defaults to 2 (m - 1), so an irfft or irfftn with an
odd output length has a tangent one element short on that axis (tagged
"odd_length_jvp"; the VJP is right). FFT::vmap has the same gap at MLX 846d176
and in releases up to 0.32.3 (mx.vmap of irfft with n = 5 gives length 4), but
the 0.32.4 wheel maps it right, and the vmap oracle checks the mapped VJP's
gradients, which come out right either way: not a class of its own.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints
from ._support import expression as E
from ._support.cases import case, in_half_precision, logical_inputs
from ._support.linear import linear_vjp
from ._support.views import draw_layout, draw_shape, laid_out, with_imaginary

FLOATS = ("float32", "float16", "bfloat16")
NORMS = ("backward", "ortho", "forward")


@dataclass(frozen=True)
class Transform:
    # Identity and numpy's function of the same name.
    name: str
    summary: str
    # "one": params n, axis; "many": params s, axes (fft2's axes default to the last two).
    form: str
    # The operand: real only (rfft, rfftn), or real and complex; the output real (irfft).
    real_input: bool = False
    real_output: bool = False

    def numpy(self):
        return getattr(np.fft, self.name)


TABLE = (
    Transform("fft", "mx.fft.fft (FFT): n pads or truncates, any axis, every norm", "one"),
    Transform("ifft", "mx.fft.ifft (FFT, inverse)", "one"),
    Transform("rfft", "mx.fft.rfft (FFT, real input): odd and even lengths", "one", real_input=True),
    Transform("irfft", "mx.fft.irfft (FFT, real output): n odd and even", "one", real_output=True),
    Transform("fft2", "mx.fft.fft2 (FFT over the last two axes)", "many"),
    Transform("fftn", "mx.fft.fftn (FFT over several axes): s pads or truncates", "many"),
    Transform("ifftn", "mx.fft.ifftn (FFT, inverse, several axes)", "many"),
    Transform("rfftn", "mx.fft.rfftn (FFT, real input, several axes)", "many", real_input=True),
    Transform("irfftn", "mx.fft.irfftn (FFT, real output, several axes)", "many", real_output=True),
)


# --- float64 reference ---------------------------------------------------------------------------

def _call_numpy(t: Transform, x, params):
    fn, norm = t.numpy(), params.get("norm", "backward")
    if t.form == "one":
        return fn(x, n=params.get("n"), axis=params.get("axis", -1), norm=norm)
    axes = params.get("axes", [-2, -1] if t.name == "fft2" else None)
    return fn(x, s=params.get("s"), axes=None if axes is None else tuple(axes), norm=norm)


def _reference(t: Transform):
    def forward(inp, params):
        x = np.asarray(inp["a"])
        if t.real_input and np.iscomplexobj(x):   # MLX's docs: complex input "will be silently cast to a real type"
            x = np.real(x)
        y = _call_numpy(t, x if np.iscomplexobj(x) or t.real_input else x.astype(np.complex128), params)
        return np.asarray(y)
    return forward


def _reference_vjp(t: Transform):
    forward = _reference(t)
    return lambda inp, g, params: {"a": linear_vjp(lambda x: forward({"a": x}, params), inp["a"], g)}


def _expression(t: Transform):
    def expression(params, names):
        norm = E.lit(params.get("norm", "backward"))
        if t.form == "one":
            return E.call(f"mx.fft.{t.name}", names["a"], n=E.lit(params.get("n")),
                          axis=E.lit(params.get("axis", -1)), norm=norm)
        axes = params.get("axes", [-2, -1] if t.name == "fft2" else None)
        return E.call(f"mx.fft.{t.name}", names["a"], s=E.lit(params.get("s")), axes=E.lit(axes), norm=norm)
    return expression


# --- catalog -------------------------------------------------------------------------------------

# (name, shape, layout, params, description)
ONE = (
    ("even", (8,), "contiguous", {}, ""),
    ("odd", (7,), "contiguous", {"axis": 0}, "an odd length (no Nyquist bin)"),
    ("n_padded", (2, 5), "contiguous", {"n": 8, "axis": -1}, "n beyond the axis: zero padding"),
    ("n_truncated", (2, 6), "contiguous", {"n": 4, "axis": 1}, "n below the axis: truncation"),
    ("n_odd", (2, 4), "contiguous", {"n": 5, "axis": -1}, "an odd n (irfft: not the default 2(m - 1))"),
    ("axis0_ortho", (4, 3), "contiguous", {"axis": 0, "norm": "ortho"}, ""),
    ("forward_norm_transposed", (3, 4), "transposed", {"axis": -1, "norm": "forward"}, ""),
    ("strided", (2, 5), "strided", {"axis": -1}, ""),
    ("reversed", (2, 4), "reversed", {"axis": 0}, "a negative stride"),
    ("broadcast", (3, 4), "broadcast", {"axis": -1}, "a stride-0 leading axis"),
)
MANY = (
    ("matrix", (4, 4), "contiguous", {}, "the default axes"),
    ("axes_subset", (2, 3, 4), "contiguous", {"axes": [0, 2]}, ""),
    ("s_padded_truncated", (3, 4), "contiguous", {"s": [4, 3], "axes": [0, 1]}, "one axis padded, one cut"),
    ("negative_axes_ortho", (3, 4), "transposed", {"axes": [-1, -2], "norm": "ortho"}, "axes in reverse order"),
    ("odd_forward_norm", (3, 5), "strided", {"axes": [0, 1], "norm": "forward"}, ""),
    ("broadcast", (2, 3), "broadcast", {"axes": [-1]}, ""),
)


CAST = ("complex input: the real part is transformed, as MLX documents (\"silently cast to a real type\"); "
        "the gradient is the real one, its imaginary part 0")


# Known defects of MLX 0.32.4: FFT::jvp takes irfftn's default output length 2(m - 1), so
# for an odd output length the forward-mode tangent is one element short on that axis.
TAGS = {("irfft", "n_odd"): ("odd_length_jvp",), ("irfftn", "s_padded_truncated"): ("odd_length_jvp",)}
# Their declaration, on the ops that carry the tag: only the forward-mode oracle shows it.
DEFECTS = {op: (KnownDefect(tag, revealed_by="forward_mode"),) for (op, _), tags in TAGS.items() for tag in tags}


# The inverse and two-axis forms share FFT::vjp's paths with fft and fftn: their first rows
# (flags and lengths) suffice, which keeps the catalog's cost in check.
ROWS_OF = {"ifft": 6, "fft2": 4, "ifftn": 5}


def _values(shape, seed, complex_=False):
    v = seeded_ints(tuple(shape), 500 + seed)
    return v + 1j * seeded_ints(tuple(shape), 550 + seed) if complex_ else v


def _scenarios(t: Transform):
    forward = _reference(t)

    def build():
        rows = (ONE if t.form == "one" else MANY)[: ROWS_OF.get(t.name)]
        out = []
        for k, (name, shape, lay, params, desc) in enumerate(rows):
            a = laid_out(_values(shape, k), lay)[0]
            out.append(case(t.name, name, {"a": a}, params, reference=forward, seed=k, family="fft", desc=desc,
                            fd=k == 0, tags=TAGS.get((t.name, name), ())))
        for k in sorted({0, min(5, len(rows) - 1)}):
            name, shape, lay, params, desc = rows[k]
            a = laid_out(_values(shape, 20 + k, True), lay, "complex64")[0]
            desc = (desc + "; " if desc else "") + CAST if t.real_input else desc
            out.append(case(t.name, f"complex/{name}", {"a": a}, params, reference=forward, seed=20 + k,
                            family="fft", desc=desc))
        return out + in_half_precision(out, picks=1)
    return build


# --- fuzz strategy -------------------------------------------------------------------------------

def _draw_params(draw, t: Transform, shape) -> dict:
    rank, norm = len(shape), draw(D.choice(NORMS))
    if t.form == "one":
        n = draw(D.choice((None, draw(D.irange(1, 8)))))
        if t.real_output and n is None:
            n = max(2 * (shape[-1] - 1), 1) if shape[-1] > 1 else 2
        return {"n": n, "axis": draw(D.irange(-rank, rank - 1)) if n is not None or not t.real_output else -1,
                "norm": norm}
    axes = sorted({draw(D.irange(0, rank - 1)) for _ in range(draw(D.irange(1, min(rank, 2))))})
    if draw(D.irange(0, 1)):
        return {"s": [draw(D.irange(1, 6)) for _ in axes], "axes": axes, "norm": norm}
    return {"axes": axes, "norm": norm}


def _strategy(t: Transform):
    forward = _reference(t)

    def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
        dtype = draw(D.choice(dtypes))
        shape = tuple(max(d, 2) for d in draw_shape(draw, 1, 3, 6, zero=False))
        params = _draw_params(draw, t, shape)
        a = draw_layout(draw, with_imaginary(draw, draw_values_for(draw, shape), dtype), dtype)[0]
        y = forward(logical_inputs({"a": a}), params)
        g = with_imaginary(draw, draw_values_for(draw, np.shape(y)), "complex64" if np.iscomplexobj(y) else "")
        cot = laid_out(g, dtype="complex64" if np.iscomplexobj(y) else
                       ("float32" if dtype == "complex64" else dtype))[0]
        return D.finish(Scenario(name="", op=t.name, operands={"a": a}, wrt=("a",), params=params, cotangent=cot,
                                 family="fft", description=f"generated: a{shape} {params}"))
    return fuzz_case


def draw_values_for(draw, shape):
    return seeded_ints(tuple(shape), draw(D.irange(0, 2**16)))


def _record(t: Transform) -> OpInfo:
    return OpInfo(
        name=t.name, known_defects=DEFECTS.get(t.name, ()), summary=t.summary, operands=("a",),
        differentiable=("a",), reference=_reference(t),
        reference_vjp=_reference_vjp(t), multilinear=True, mlx_call=f".ops.repro.fft:{t.name}",
        call_expression=_expression(t), primitives=("FFT", "AsType", "Slice", "SliceUpdate", "Multiply"),
        dtypes=FLOATS, complex=True, scenarios=_scenarios(t), strategy=_strategy(t),
        rule="linear: d a = the adjoint of the transform applied to g (MLX's packing dL/dRe + i dL/dIm; "
             "a real operand takes the real part)")


OPS = tuple(_record(t) for t in TABLE)
