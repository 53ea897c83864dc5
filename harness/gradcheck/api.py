"""The entry point: gradcheck(fn, inputs, ...)."""
from __future__ import annotations

import time

from . import engine, options, trees
from .report import GradcheckError, Report


def gradcheck(fn, inputs, *, order=1, transforms=options.TRANSFORMS, dtypes=None, tolerances=None,
              fast=None, projections=2, seed=0, raise_exception=True, shrink=5.0, device=None,
              isolated=False) -> Report:
    """Check fn's gradients in MLX against fn itself differentiated numerically in float64.

    fn: a function of arrays or of pytrees (dicts, lists, tuples) of arrays returning an
        array or a pytree of arrays; an mx.custom_function; or an mlx.nn.Module, whose
        trainable parameters are checked with the inputs (named model.<path>).
    inputs: a tuple or list of fn's positional arguments. Floating and complex arrays
        (mx or NumPy) are differentiated; other leaves (integer arrays, Python numbers,
        strings) are passed through unchanged.

    order: 1, or 2 to check the gradient function's own derivatives as well (the
        Hessian-vector product and forward-over-reverse, against differences of
        the float64 gradient).
    transforms: any of "vjp" (mx.vjp against the oracle), "jvp" (mx.jvp against the
        oracle), "identity" (<v, J u> = <J^T v, u> between the two), "vmap" (mx.vmap of
        the forward, the VJP and the JVP over distinct examples against a loop, leading
        and last in_axes), "compile" (mx.compile of the same against eager, and
        shapeless=True traced at a smaller shape); default all.
    dtypes: the dtypes to check MLX in, among float32, float16, bfloat16, complex64,
        float64: real leaves are cast to it, complex leaves stay complex64 (MLX's only
        complex type; "complex64" means float32 for the real leaves). Default: the
        inputs' own dtypes. The point is rounded to the coarsest dtype checked, so every
        dtype sees the same point.
    tolerances: {dtype: (atol, rtol) or one number}, merged over the defaults
        (options.TOLERANCES): element allowance atol * max|expected| + rtol * |expected|,
        plus the oracle's stated error bound.
    fast: None (auto: element by element up to options.FULL_MAX input elements, random
        projections above), True (projections) or False (every element).
    projections: random directions per input leaf in fast mode (and for the identity).
    seed: the random directions' and cotangents' seed.
    raise_exception: True raises GradcheckError (an AssertionError) on a failure;
        False returns the Report either way.
    shrink: seconds to spend, on a failure, looking for a smaller and simpler
        counterexample (0: none); the message then ends with a standalone reproducer.
    device: None (the default device), "cpu" or "gpu" for MLX's side; the oracle
        always runs on the CPU (MLX's float64 is CPU only).
    isolated: False (default) avoids the calls known to kill the process on MLX 0.32.4
        (shapeless compile with an input holding a size-1 axis; the report says "not
        tried" and why); True tries them: for a caller that runs gradcheck in a process
        of its own and takes a crash as a finding (mlx-vjpcheck sweep does).

    The oracle is fn evaluated with float64 leaves on the CPU, differentiated by
    Richardson-extrapolated central differences with a stated error bound that counts
    MLX's float64 kernel error (about 1e-6 relative: its transcendentals are float32
    accurate). Where fn does not run in float64 (or a leaf is complex) the report says
    so and the bound is float32-level. Complex gradients follow MLX's convention:
    dL/dRe z + i dL/dIm z for L = Re sum(conj(v) * f). Points where one-sided
    differences disagree are reported as not differentiable, never as failures, and
    excuse nothing elsewhere.
    """
    opts = options.check(order, transforms, dtypes, tolerances, fast, projections, seed,
                         raise_exception, shrink, device, isolated)
    if not isinstance(inputs, (tuple, list)):
        raise TypeError(f"gradcheck: inputs must be a tuple or list of fn's positional arguments, "
                        f"not {type(inputs).__name__}")
    if not callable(fn):
        raise TypeError(f"gradcheck: fn must be callable, not {type(fn).__name__}")
    problem = trees.problem(fn, inputs)
    if not problem.paths:
        raise ValueError("gradcheck: inputs: no floating-point array to differentiate")
    report = Report(options={k: v for k, v in opts.__dict__.items()})
    start = time.monotonic()
    try:
        engine.run(problem, opts, report)
        if report.failures and opts.shrink > 0:
            from . import shrink
            shrink.minimise(gradcheck, fn, inputs, opts, report)
    finally:
        problem.restore()
    report.seconds = time.monotonic() - start
    if report.failures and raise_exception:
        raise GradcheckError(report.message(), report)
    return report
