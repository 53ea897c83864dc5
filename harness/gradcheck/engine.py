"""One run of the checks: the problem, its oracle columns, each dtype's comparisons,
and for order 2 the same on the gradient function."""
from __future__ import annotations

import numpy as np

from . import consistency, transforms, trees
from .float64 import Oracle, leaf_dtype, round_to, to_np, to_mx
from .options import FULL_MAX

ORDER = ("bfloat16", "float16", "float32", "float64")


class Second:
    """The gradient function x -> J(x)^T v as a problem of its own (order 2): its vjp is
    the Hessian-vector product, its jvp forward-over-reverse, its oracle the float64 VJP's
    differences."""

    def __init__(self, first, cot: list):
        self.first, self.cot = first, cot
        self.paths, self.values, self.module = first.paths, first.values, first.module
        self.out_paths = [f"grad {p}" for p in first.paths]

    def call(self, arrays: list) -> list:
        import mlx.core as mx
        ys = self.first.call(arrays)   # lazy: only the dtypes are read
        cots = [to_mx(v, str(y.dtype).rsplit(".", 1)[-1]) for v, y in zip(self.cot, ys)]
        return list(mx.vjp(lambda *a: self.first.call(list(a)), list(arrays), cots)[1])

    def restore(self) -> None:
        self.first.restore()


def dtypes_of(problem, asked) -> tuple:
    if asked is not None:
        return asked
    names = [trees.dtype_name(x) for x in problem.values]
    real = [n for n in names if not n.startswith("complex")]
    return tuple(dict.fromkeys(real)) or ("float32",)


def base_points(problem, dtypes: tuple) -> list:
    """The leaves in float64, rounded through every checked dtype (coarsest last), so every
    dtype's check and the oracle share one point."""
    pts = []
    for x in problem.values:
        p = to_np(x) if not isinstance(x, np.ndarray) else np.asarray(x, dtype=np.result_type(x, np.float64))
        for d in sorted({leaf_dtype(False, d) for d in dtypes} | {trees.dtype_name(x)} - {"complex64", "complex128"},
                        key=lambda d: -ORDER.index(d) if d in ORDER else 0):
            p = round_to(p, d) if d != "float64" else p
        pts.append(p)
    return pts


def run(problem, opts, report) -> None:
    dtypes = dtypes_of(problem, opts.dtypes)
    points = base_points(problem, dtypes)
    flags = [bool(np.iscomplexobj(p)) for p in points]
    size = sum(p.size * (2 if c else 1) for p, c in zip(points, flags))
    fast = opts.fast if opts.fast is not None else size > FULL_MAX
    report.mode = "fast" if fast else "full"
    coarse = next((d for d in ORDER if d in {leaf_dtype(False, d) for d in dtypes}), "float32")
    rng = np.random.default_rng(opts.seed)
    current, first_cot = problem, None
    for order in range(1, opts.order + 1):
        if order == 2:
            current = Second(problem, first_cot)
        oracle = Oracle(current, flags)
        setup = transforms.Setup(current, points, flags, oracle, coarse, rng, fast, opts.projections)
        first_cot = first_cot or setup.cot
        report.context.update(points=points, flags=flags, paths=list(problem.paths),
                              out_paths=list(problem.out_paths), **{f"cot{order}": setup.cot})
        report.notes += [n for n in oracle.notes if n not in report.notes]
        note = (f"order {order}: oracle in {oracle.precision} on the CPU, its evaluation error taken as "
                f"{setup.noise_level:.0e} of each output element's size (MLX's {oracle.precision} kernels)")
        if note not in report.notes:
            report.notes.append(note)
        for dtype in dtypes:
            checks = _one_dtype(setup, dtype, opts)
            for c in checks:
                c.transform = c.transform if order == 1 else f"order 2 {c.transform}"
            report.checks += checks


def _one_dtype(setup, dtype: str, opts) -> list:
    import mlx.core as mx
    tol = opts.tolerances[dtype]
    device = {"cpu": mx.cpu, "gpu": mx.gpu}.get(opts.device, mx.default_device())
    runs = [("vjp", lambda m: transforms.vjp_checks(m, tol)), ("jvp", lambda m: transforms.jvp_checks(m, tol)),
            ("identity", lambda m: transforms.identity_checks(m, tol, opts.projections)),
            ("vmap", lambda m: consistency.vmap_checks(m, tol, "jvp" in opts.transforms)),
            ("compile", lambda m: consistency.compile_checks(m, tol, "jvp" in opts.transforms, opts.isolated))]
    with mx.stream(device):
        try:
            m = transforms.Mlx(setup, dtype)
        except Exception as e:   # no VJP rule (or fn refuses the dtype): MLX raises various types
            return [transforms.unsupported("vjp", dtype, e)]
        out = []
        for name, run in runs:
            if name in opts.transforms:
                try:
                    out += run(m)
                except Exception as e:   # a missing rule ("not implemented"): stated, not a wrong value
                    out.append(transforms.unsupported(name, dtype, e))
    return out
