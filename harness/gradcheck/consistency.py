"""Transforms of MLX's own derivatives against plain evaluation, in the same dtype.

* vmap: mx.vmap of the forward, the gradient (J^T v) and, with "jvp", J u,
  over a batch of BATCH distinct examples (distinct inputs and cotangents),
  against a Python loop; once with the batch on the leading axis (in_axes=0)
  and once on the last (in_axes=ndim, a non-leading axis).
* compile: mx.compile of the VJP (and JVP) against eager, and of the VJP with
  shapeless=True traced at a smaller shape (the inputs' first axis cut by
  one) and then called at the checked shape, where fn runs at the smaller
  shape, no input has a size-1 axis and fn is no nn.Module (see _smaller).

A transform that raises where plain evaluation works is "unsupported" (MLX has
no rule for it: stated, not a wrong value); a value outside the dtype's
tolerance is a failure.
"""
from __future__ import annotations

import numpy as np

from .float64 import to_mx, to_np
from .report import Check
from .transforms import _checks, _dt, unsupported

BATCH = 3


def _functions(m, with_jvp: bool) -> dict:
    """name -> (f(arrays, extras) -> flat list, extras) for the forward and derivatives."""
    import mlx.core as mx
    n = len(m.arrays)
    fns = {"forward": (lambda *a: m.fn(*a), []),
           "vjp": (lambda *a: mx.vjp(m.fn, list(a[:n]), list(a[n:]))[1], list(m.cots))}
    if with_jvp:
        tans = [to_mx(m.s.random(x.shape, np.iscomplexobj(x)), _dt(a)) for x, a in zip(m.s.points, m.arrays)]
        fns["jvp"] = (lambda *a: mx.jvp(m.fn, list(a[:n]), list(a[n:]))[1], tans)
    return fns


def _compare(name, m, got: list, want: list, tol, paths) -> list:
    out = []
    for path, g, w in zip(paths, got, want):
        g, w = to_np(g), to_np(w)
        if g.shape != w.shape:
            out.append(Check(name, m.dtype, "all inputs", path, "fail",
                             detail=f"shape {list(g.shape)} vs {list(w.shape)} without the transform"))
            continue
        shape = w.shape
        out += _checks(name, m.dtype, "all inputs", path, g.ravel(), w.ravel(), np.zeros(w.size),
                       np.zeros(w.size, bool), tol,
                       lambda k: (path, [int(i) for i in np.unravel_index(k, shape)] if shape else []))
    return [c for c in out if c.status != "pass"] or [Check(name, m.dtype, "all inputs", "all outputs", "pass")]


def _paths(m, what: str) -> list:
    if what == "vjp":
        return [f"grad {p}" for p in m.s.problem.paths]
    return list(m.s.out_paths)


def _batch(m, args: list) -> list:
    """BATCH distinct examples of each argument: 0.1 b scaled noise added to example 0."""
    out = []
    for a in args:
        x = to_np(a)
        sc = max(float(np.sqrt(np.mean(np.abs(x) ** 2))) if x.size else 1.0, 1e-3)
        out.append([x] + [x + 0.1 * b * sc * m.s.random(x.shape, np.iscomplexobj(x)) for b in range(1, BATCH)])
    return out


def _unsupported(name, m, e) -> list:
    return [unsupported(name, m.dtype, e)]


def vmap_checks(m, tol, with_jvp: bool) -> list:
    import mlx.core as mx
    out = []
    for what, (f, extras) in _functions(m, with_jvp).items():
        args = list(m.arrays) + list(extras)
        examples = _batch(m, args)
        loop = [f(*[to_mx(ex[b], _dt(a)) for ex, a in zip(examples, args)]) for b in range(BATCH)]
        want = [mx.stack([loop[b][k] for b in range(BATCH)]) for k in range(len(loop[0]))]
        for lead in (True, False):
            axes = [0 if lead else np.ndim(ex[0]) for ex in examples]
            name = f"vmap({what}, in_axes={'0' if lead else 'last'})"
            stacked = [to_mx(np.stack(ex, axis=ax), _dt(a)) for ex, ax, a in zip(examples, axes, args)]
            try:
                got = mx.vmap(f, in_axes=tuple(axes))(*stacked)
                mx.eval(got)
            except Exception as e:   # MLX's missing vmap rules raise various types
                out += _unsupported(name, m, e)
                continue
            out += _compare(name, m, got, want, tol, _paths(m, what))
    return out


def _cut(arrays: list, first: int) -> list:
    """arrays[first:] with their first axis cut by one (where it has three or more: the
    traced shape gets no new size-1 axis, see _smaller)."""
    return [a[:-1] if i >= first and a.ndim and a.shape[0] > 2 else a for i, a in enumerate(arrays)]


def _size_one_axis(arrays: list) -> bool:
    return any(a.ndim >= 2 and 1 in a.shape for a in arrays)


CRASH_PRONE = ("shapeless compile not tried: an input has a size-1 axis, and MLX 0.32.4's shapeless "
               "compile of a reduction over such an axis kills the process (SIGSEGV/SIGFPE); "
               "gradcheck(..., isolated=True) in a process of its own tries it")


def _smaller(m, f, extras, isolated=False) -> list | str | None:
    """Arguments at a smaller shape fn runs at (the positional inputs' first axis cut by
    one; the cotangents or tangents cut alike or kept), None, or why it is not tried."""
    import mlx.core as mx
    if m.s.problem.module is not None:
        # each call installs the parameters with module.update: state mutated inside the
        # traced function, which gives wrong values under shapeless compile where the
        # same graph written as a pure function is right (MLX 0.32.4): not tried
        return None
    small = _cut(m.arrays, 0)
    if all(c is a for c, a in zip(small, m.arrays)):
        return None
    # MLX 0.32.4 crashes the process (SIGSEGV/SIGFPE) evaluating a reduction over a
    # size-1 axis under shapeless compile (mx.sum(x, axis=0) for x of shape (1, 4)):
    # in the caller's own process such inputs are not tried, and the report says so
    if not isolated and _size_one_axis(list(m.arrays) + list(extras)):
        return CRASH_PRONE
    for ext in (_cut(extras, 0), list(extras)):
        try:
            mx.eval(f(*small, *ext))
            return small + ext
        except Exception:   # fn does not run at that shape: try the next, else skip
            continue
    return None


def compile_checks(m, tol, with_jvp: bool, isolated: bool = False) -> list:
    import mlx.core as mx
    out = []
    for what, (f, extras) in _functions(m, with_jvp).items():
        if what == "forward":   # the derivatives contain it; each compilation costs ~0.5 s
            continue
        args = list(m.arrays) + list(extras)
        want = f(*args)
        for shapeless in (False, True) if what == "vjp" else (False,):
            name = f"compile({what}{', shapeless' if shapeless else ''})"
            # a gradient of the wrong shape (a custom rule's defect, failed by the vjp check)
            # can crash MLX's shapeless compile: not attempted then
            wrong_shape = any(g.shape != p.shape for g, p in zip(m.grads, m.s.points))
            small = _smaller(m, f, extras, isolated) if shapeless and not wrong_shape else None
            if shapeless and isinstance(small, str):
                out.append(Check(name, m.dtype, "all inputs", "all outputs", "not tried", detail=small))
                continue
            if shapeless and small is None:
                continue
            try:
                cf = mx.compile(f, shapeless=shapeless)
                if shapeless:
                    mx.eval(cf(*small))
                got = cf(*args)
                mx.eval(got)
            except Exception as e:   # MLX's missing compile support raises various types
                out += _unsupported(name, m, e)
                continue
            out += _compare(name, m, got, want, tol, _paths(m, what))
    return out
