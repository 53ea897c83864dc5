"""The FFTs (harness/ops/fft.py): the linear-adjoint VJP against float64
differences (complex and real operands, complex and real outputs) and against
numpy's own adjoint identities, planted wrong rules (norm ignored, the
conjugate dropped, wrong only for a strided operand) caught by the catalog, and
the pinned MLX verdicts: only irfft/irfftn with an odd output length fail (the
JVP's length; FFT::jvp). Complex input to rfft and rfftn: the documented cast to
the real part, pinned on MLX, and a VJP that ignores the cast rejected by the
complex rows only."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck import ops
from mlx_vjpcheck.ops import fft as F

NAMES = [t.name for t in F.TABLE]


@pytest.mark.parametrize("name", NAMES)
def test_reference_vjp_agrees_with_differences(name):
    compared, wrong = B.against_differences(name)
    assert compared >= 5 and wrong == [], (compared, wrong)


def test_adjoint_identities():
    """<g, fft(x)> = <ifft(g) n, x> (backward norm) and the rfft adjoint's halved bins."""
    rng = np.random.RandomState(0)
    x = rng.randn(6) + 1j * rng.randn(6)
    g = rng.randn(6) + 1j * rng.randn(6)
    d = ops.get("fft").reference_vjp({"a": x}, g, {})["a"]
    assert np.allclose(d, 6 * np.fft.ifft(g))
    xr, gr = rng.randn(6), rng.randn(4) + 1j * rng.randn(4)
    d = ops.get("rfft").reference_vjp({"a": xr}, gr, {})["a"]
    # L = Re sum conj(g_k) X_k with X_k = sum_j x_j e^(-2 pi i jk/6), k < 4: dL/dx_j = Re(6 ifft(g, 0, 0))_j
    assert np.allclose(d, np.real(6 * np.fft.ifft(np.concatenate([gr, np.zeros(2)]))))
    assert d.dtype == np.float64


def test_irfft_ignores_the_imaginary_part_of_the_zero_and_nyquist_bins():
    z = np.array([1 + 5j, 2 - 1j, 3 + 7j])
    d = ops.get("irfft").reference_vjp({"a": z}, np.ones(4), {})["a"]
    assert d[0].imag == 0 and d[2].imag == 0


# --- planted wrong rules -----------------------------------------------------------------------------

# Planted rules need real operands and outputs (helpers/breadth.py): irfft and irfftn of real input.
MUTANTS = {
    ("irfft", "norm_ignored"): lambda ctx: ctx.reference(norm="backward"),
    ("irfft", "n_ignored"): lambda ctx: ctx.reference(n=None),
    ("irfftn", "wrong_only_for_strided"): B.scaled_where(B.strided),
    ("irfftn", "plain"): B.scaled_where(lambda s, n: True, 0.5),
    ("irfft", "wrong_only_in_float16"): B.scaled_where(B.in_dtype("float16")),
}


@pytest.mark.parametrize("key", sorted(MUTANTS))
def test_mutant_is_caught(key):
    assert B.first_order_caught(key[0], MUTANTS[key], first_only=True), key


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("irfft") == [] and B.first_order_control("irfftn") == []


@needs_pinned_mlx()
@pytest.mark.parametrize("name", NAMES)
def test_pinned_mlx_fails_exactly_the_tagged_scenarios(name):
    failing, tagged = B.pinned_verdicts(name)
    want = {"irfft": {"irfft/n_odd"}, "irfftn": {"irfftn/s_padded_truncated"}}.get(name, set())
    assert failing == tagged == want, (failing, tagged)


# --- complex input to rfft and rfftn: MLX's documented cast to the real part -------------------------

@pytest.mark.parametrize("name", ["rfft", "rfftn"])
def test_real_input_transforms_take_the_real_part_of_complex_input(name):
    """mx.fft.rfft's docs: a complex array "will be silently cast to a real type". The
    reference transforms the real part; its VJP is the real gradient (imaginary part 0)."""
    info, rng = ops.get(name), np.random.RandomState(1)
    z = rng.randn(3, 4) + 1j * rng.randn(3, 4)
    y = info.reference({"a": z}, {})
    assert np.allclose(y, info.reference({"a": z.real}, {}))
    g = rng.randn(*y.shape) + 1j * rng.randn(*y.shape)
    d = info.reference_vjp({"a": z}, g, {})["a"]
    assert np.iscomplexobj(d) and np.all(d.imag == 0)
    assert np.allclose(d.real, info.reference_vjp({"a": z.real}, g, {})["a"])


def _cast_ignored(ctx):
    """rfft's VJP as if the complex input were not cast: the adjoint of z -> the first
    n//2 + 1 bins of fft(z) (an imaginary part appears); on real input the true rule."""
    from mlx_vjpcheck.ops._support.linear import linear_vjp
    p = ctx.params
    axis, norm = p.get("axis", -1), p.get("norm", "backward")
    n = p.get("n") or ctx.operands["a"].shape[axis]

    def forward(x):
        return np.take(np.fft.fft(x, n=n, axis=axis, norm=norm), np.arange(n // 2 + 1), axis=axis)
    return {"a": linear_vjp(forward, ctx.operands["a"], ctx.cot)}


def test_a_vjp_ignoring_the_cast_is_rejected_by_complex_rows_only():
    from helpers import wrong_vjp as W
    rejected = [s.name for s in W.scenarios("rfft") if W.honest("rfft")[s.name] == "pass"
                and W._judge(s, _cast_ignored) != "pass"]
    assert rejected and all("/complex/" in n for n in rejected), rejected
    control = [s.name for s in W.scenarios("rfft") if W.honest("rfft")[s.name] == "pass"
               and W._judge(s, lambda ctx: ctx.reference()) != "pass"]
    assert control == [], control


@needs_pinned_mlx()
def test_pinned_mlx_casts_complex_input_of_rfft():
    import mlx.core as mx
    z = np.array([1 + 2j, 3 - 1j, -2 + 0.5j, 1j], dtype=np.complex64)
    (y,), (d,) = mx.vjp(lambda a: mx.fft.rfft(a), [mx.array(z)], [mx.array(np.ones(3, dtype=np.complex64))])
    assert np.allclose(np.array(y), np.fft.rfft(z.real))
    assert np.array(d).dtype == np.complex64 and np.all(np.array(d).imag == 0)
