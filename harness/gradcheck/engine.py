"""One run of the checks: the problem, its oracle columns, each dtype's comparisons,
and for order 2 the same on the gradient function."""
from __future__ import annotations

import numpy as np

from . import consistency, hessian, transforms, trees
from .float64 import Oracle, leaf_dtype, round_to, to_np, to_mx
from .options import FULL_MAX

ORDER = ("bfloat16", "float16", "float32", "float64")


class Second:
    """The gradient function (x, v) -> J(x)^T v as a problem of its own (order 2), with the
    cotangent v among its inputs (as PyTorch's gradgradcheck differentiates grad_outputs
    too): its vjp is the Hessian-vector product for x and J u for v, its jvp
    forward-over-reverse, its oracle the float64 VJP's differences. A rule can be right in
    x and wrong in v (the VJP of a VJP with respect to the cotangent, as full's was)."""

    def __init__(self, first, cot: list):
        self.first, self.n = first, len(first.paths)
        self.cot = [with_zeros(c) for c in cot]
        self.paths = list(first.paths) + [f"cotangent {p}" for p in first.out_paths]
        self.values, self.module = list(first.values) + self.cot, first.module
        self.out_paths = [f"grad {p}" for p in first.paths]

    def call(self, arrays: list) -> list:
        import mlx.core as mx
        xs, vs = list(arrays[:self.n]), arrays[self.n:]
        ys = self.first.call(xs)   # lazy: only the dtypes are read
        cots = [v.astype(y.dtype) for v, y in zip(vs, ys)]
        return list(mx.vjp(lambda *a: self.first.call(list(a)), xs, cots)[1])

    def restore(self) -> None:
        self.first.restore()


def with_zeros(cot: np.ndarray) -> np.ndarray:
    """The order-2 cotangent: the random one with every third element (from the second) set
    to 0. A rule that divides by the cotangent or takes its log (logcumsumexp's did) is wrong
    exactly there, where the gradient function is linear in v: a point that must work, and
    one random cotangents never hit. A cotangent of one element is kept whole (a zero would
    leave nothing of the Hessian-vector product to compare)."""
    out = np.array(cot, copy=True)
    if out.size >= 2:
        out.reshape(-1)[1::3] = 0
    return out


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
    current, first_cot, first_oracle = problem, None, None
    for order in range(1, opts.order + 1):
        if order == 2:
            current = Second(problem, first_cot)
            points = points + current.cot
            flags = flags + [bool(np.iscomplexobj(c)) for c in current.cot]
        oracle = Oracle(current, flags)
        setup = transforms.Setup(current, points, flags, oracle, coarse, rng, fast, opts.projections)
        first_cot, first_oracle = first_cot or setup.cot, first_oracle or oracle
        # order 2: the Hessian also against fn's own second differences (hessian.py says why)
        pairs = (hessian.Pairs(first_oracle, setup, len(problem.paths), opts.projections)
                 if order == 2 and "vjp" in opts.transforms else None)
        if order == 1:   # the reproducer's point: fn's own leaves (order 2 adds the cotangent's)
            report.context.update(points=points, flags=flags, paths=list(problem.paths),
                                  out_paths=list(problem.out_paths))
        else:
            report.context["cot_point"] = current.cot
        report.context[f"cot{order}"] = setup.cot
        report.notes += [n for n in oracle.notes if n not in report.notes]
        note = (f"order {order}: oracle in {oracle.precision} on the CPU, its evaluation error taken as "
                f"{setup.noise_level:.0e} of each output element's size (MLX's {oracle.precision} kernels)")
        if note not in report.notes:
            report.notes.append(note)
        for dtype in dtypes:
            checks = _one_dtype(setup, dtype, opts, pairs)
            for c in checks:
                c.transform = c.transform if order == 1 else f"order 2 {c.transform}"
            report.checks += checks


def _one_dtype(setup, dtype: str, opts, pairs=None) -> list:
    import mlx.core as mx
    tol = opts.tolerances[dtype]
    device = {"cpu": mx.cpu, "gpu": mx.gpu}.get(opts.device, mx.default_device())
    runs = [("vjp", lambda m: transforms.vjp_checks(m, tol)), ("jvp", lambda m: transforms.jvp_checks(m, tol)),
            ("identity", lambda m: transforms.identity_checks(m, tol, opts.projections)),
            ("vmap", lambda m: consistency.vmap_checks(m, tol, "jvp" in opts.transforms)),
            ("compile", lambda m: consistency.compile_checks(m, tol, "jvp" in opts.transforms, opts.isolated))]
    if pairs is not None:
        runs.insert(1, ("vjp", lambda m: hessian.checks(m, pairs, tol)))
    with mx.stream(device):
        try:
            m = transforms.Mlx(setup, dtype)
        except transforms.ForwardRefused as e:
            return [transforms.unsupported("vjp", dtype, e.__cause__)]
        except Exception as e:   # the VJP raises where fn works: MLX raises various types
            return [transforms.raised("vjp", dtype, e)]
        out = []
        for name, run in runs:
            if name in opts.transforms:
                try:
                    out += run(m)
                except Exception as e:   # vjp/jvp: a failure unless MLX has no rule; vmap/compile
                    # raise for limitations of the transform itself (stated, consistency.py)
                    out.append((transforms.raised if name in ("vjp", "jvp", "identity") else
                                transforms.unsupported)(name, dtype, e))
    return out
