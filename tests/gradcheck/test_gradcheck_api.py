"""gradcheck's surface: the lazy export, options checked up front in one line, the
report, the pytest helper, the documented complex convention, the oracle's bound."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

mx = pytest.importorskip("mlx.core")

import mlx_vjpcheck  # noqa: E402
from mlx_vjpcheck import GradcheckError, gradcheck  # noqa: E402
from mlx_vjpcheck.core import differences as numeric  # noqa: E402
from mlx_vjpcheck.gradcheck import options, parametrize_dtypes  # noqa: E402

X = mx.array([0.5, -1.25, 2.0])


def test_importing_the_package_imports_neither_mlx_nor_the_engine():
    code = ("import sys, mlx_vjpcheck; assert 'mlx' not in sys.modules and "
            "'mlx_vjpcheck.gradcheck' not in sys.modules; print(mlx_vjpcheck.__all__)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "gradcheck" in p.stdout and "GradcheckError" in p.stdout


def test_the_error_is_an_assertion_error_for_pytest():
    assert issubclass(GradcheckError, AssertionError)
    assert callable(mlx_vjpcheck.gradcheck)


@pytest.mark.parametrize("kw, name", [
    (dict(order=3), "order"), (dict(order="1"), "order"), (dict(transforms=("vjp", "hvp")), "transforms"),
    (dict(transforms=()), "transforms"), (dict(dtypes=("float8",)), "dtypes"),
    (dict(tolerances={"float32": (1e-3,)}), "tolerances"), (dict(tolerances={"int8": 1e-3}), "tolerances"),
    (dict(tolerances=[1e-3]), "tolerances"), (dict(fast="yes"), "fast"), (dict(projections=0), "projections"),
    (dict(seed=-1), "seed"), (dict(raise_exception=1), "raise_exception"), (dict(shrink=-1), "shrink"),
    (dict(device="tpu"), "device"),
])
def test_a_bad_option_is_one_line_naming_it(kw, name):
    with pytest.raises((ValueError, TypeError)) as e:
        gradcheck(mx.sin, (X,), **kw)
    text = str(e.value)
    assert "\n" not in text and f"{name}=" in text.split(":")[1] or f"{name}[" in text


def test_bad_inputs_are_one_line():
    for inputs, word in (((1, 2), "no floating-point array"), (X, "tuple or list")):
        with pytest.raises((ValueError, TypeError)) as e:
            gradcheck(mx.sin, inputs)
        assert word in str(e.value) and "\n" not in str(e.value)


def test_tolerances_merge_over_the_defaults():
    r = gradcheck(mx.sin, (X,), tolerances={"float16": 0.5}, transforms=("vjp",))
    assert r.options["tolerances"]["float16"] == (0.5, 0.5)
    assert r.options["tolerances"]["float32"] == options.TOLERANCES["float32"]


def test_pydoc_explains_every_option():
    import inspect
    doc = gradcheck.__doc__ if callable(gradcheck) and gradcheck.__doc__ else ""
    from mlx_vjpcheck.gradcheck.api import gradcheck as fn
    params = [p for p in inspect.signature(fn).parameters if p not in ("fn", "inputs")]
    assert all(f"{p}:" in fn.__doc__ for p in params), [p for p in params if f"{p}:" not in fn.__doc__]
    assert doc   # the module (callable) has a docstring too


def test_complex_convention_is_mlxs_dl_dre_plus_i_dl_dim():
    """MLX's own gradients: real(z conj z) gives 2x + 2iy, |z| gives z/|z|; gradcheck
    passes them, and fails the conjugate (the other convention)."""
    z = mx.array(1.0 + 2.0j)
    assert complex(mx.grad(lambda z: mx.real(z * mx.conj(z)))(z).item()) == 2 + 4j
    assert np.isclose(complex(mx.grad(mx.abs)(z).item()), (1 + 2j) / np.sqrt(5))
    zs = mx.array(np.array([1 + 2j, -0.5 + 0.25j], np.complex64))
    assert gradcheck(lambda z: mx.abs(z) * mx.real(z * z), (zs,), transforms=("vjp", "jvp")).passed

    @mx.custom_function
    def conj_convention(z):
        return mx.abs(z)

    @conj_convention.vjp
    def _(z, cot, out):
        return mx.conj(cot * z / mx.abs(z))
    with pytest.raises(GradcheckError):
        gradcheck(conj_convention, (zs,), transforms=("vjp",), shrink=0)


def test_the_oracle_bound_holds_against_exact_derivatives():
    """numeric.derivative's stated error covers the real error, with MLX-like noise
    (1e-7 relative, piecewise constant) added to an exact function."""
    rng = np.random.default_rng(0)
    for x0 in rng.uniform(-3, 3, 20):
        def F(t, x0=x0):
            y = np.array([np.exp(x0 + t), np.sin(3 * (x0 + t))])
            return y * (1 + 1e-7 * np.sign(np.sin(1e7 * (x0 + t))))
        f0 = F(0.0)
        est = numeric.derivative(F, f0, 2e-6 * (np.abs(f0) + np.mean(np.abs(f0))))
        exact = np.array([np.exp(x0), 3 * np.cos(3 * x0)])
        assert np.all(np.abs(est.value - exact) <= est.err), (x0, est)
        assert np.all(est.err < 1e-3 * (1 + np.max(np.abs(exact))))   # and is not vacuous


def test_float32_only_functions_are_said_so():
    r = gradcheck(lambda x: mx.sum(mx.abs(mx.fft.fft(x)) ** 2), (mx.array([0.5, -1.0, 2.0, 0.25]),),
                  transforms=("vjp",))
    assert r.passed and any("float32" in n for n in r.notes), r.notes


def test_fast_mode_on_a_big_mlp_is_fast_and_passes():
    import time
    nn = pytest.importorskip("mlx.nn")
    mx.random.seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.Tanh(), nn.Linear(128, 64))
    x = mx.random.normal((8, 64))
    t = time.monotonic()
    r = gradcheck(model, (x,), transforms=("vjp", "jvp", "identity"))
    assert r.mode == "fast" and r.passed, r.message()
    assert time.monotonic() - t < 60


@parametrize_dtypes(("float32", "float16"), devices=("cpu", "gpu"))
def test_the_pytest_helper_runs_per_dtype_and_device(gradcheck_options):
    assert gradcheck(mx.sin, (X,), transforms=("vjp", "jvp"), **gradcheck_options).passed


def test_report_to_json_is_strict():
    from mlx_vjpcheck.core import jsonio
    r = gradcheck(mx.sin, (X,), transforms=("vjp",))
    data = jsonio.loads(jsonio.dumps(r.to_json()))
    assert data["passed"] is True and data["checks"][0]["transform"] == "vjp"


def test_a_crash_prone_shapeless_call_is_not_tried_in_process_and_says_so():
    """MLX 0.32.4 can kill the process compiling a reduction over a size-1 axis shapeless:
    in the caller's own process gradcheck does not try it and the report says so; isolated=True
    (a process of its own, as the sweep's workers) tries it."""
    import mlx.core as mx
    from mlx_vjpcheck import gradcheck
    f = lambda x: mx.sum(x, axis=1)   # noqa: E731
    plain = gradcheck(f, [mx.ones((3, 1))], raise_exception=False, shrink=0)
    tried = gradcheck(f, [mx.ones((3, 1))], raise_exception=False, shrink=0, isolated=True)
    name = "compile(vjp, shapeless)"
    assert [c.status for c in plain.checks if c.transform == name] == ["not tried"]
    assert "not tried" in plain.message() and "no check failed" in plain.message()
    assert [c.status for c in tried.checks if c.transform == name] == ["pass"]
    with pytest.raises(TypeError, match="isolated"):
        gradcheck(f, [mx.ones((3, 1))], isolated="yes")
