"""Transforms of MLX's own derivatives against plain evaluation, in the same dtype.

Every batch holds distinct examples (distinct inputs and cotangents, see _batch),
so a rule that mixes examples up or uses one for all cannot pass. Compositions:

* vmap of the forward, the gradient (J^T v) and, with "jvp", J u against a Python
  loop, with the batch on the leading axis (in_axes=0) and on the last (a
  non-leading axis);
* vmap(forward, out_axes=last): the batch put at each output's last axis;
* vmap(forward, input i unbatched): one operand shared (in_axes None), the others mapped;
* vmap(vjp, cotangent from the output): the cotangent computed inside the mapped
  function: its own output (batched wherever the forward's rule put the batch);
* vmap(grad): mx.grad inside vmap (the cotangent made inside, unbatched);
* vmap(vmap(forward)) and vmap(vmap(vjp)): nested, inner on the last axis, outer leading;
* vmap(forward) under vjp: the gradient of the mapped function (vmap inside grad) against
  each example's gradient;
* compile: mx.compile of the forward, the VJP and (with "jvp") the JVP against eager;
  the VJP with shapeless=True traced at a smaller shape (the inputs' first axis cut
  by one) and called at the checked one, and traced at the checked shape and called
  at a smaller and a larger one (first axis grown by one), each against eager at
  that shape, where fn runs there, no input has a size-1 axis and fn is no nn.Module
  (see _smaller).

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
NEST = 2   # each level of vmap(vmap(...)): NEST x NEST examples, each a loop call


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


def _compare(name, m, got: list, want: list, tol, paths, floors=None) -> list:
    out = []
    for k, (path, g, w) in enumerate(zip(paths, got, want)):
        g, w = to_np(g), to_np(w)
        if g.shape != w.shape:
            out.append(Check(name, m.dtype, "all inputs", path, "fail",
                             detail=f"shape {list(g.shape)} vs {list(w.shape)} without the transform"))
            continue
        shape = w.shape
        out += _checks(name, m.dtype, "all inputs", path, g.ravel(), w.ravel(), np.zeros(w.size),
                       np.zeros(w.size, bool), tol,
                       lambda k: (path, [int(i) for i in np.unravel_index(k, shape)] if shape else []),
                       floor=floors[k] if floors else 0.0)
    return [c for c in out if c.status != "pass"] or [Check(name, m.dtype, "all inputs", "all outputs", "pass")]


def _paths(m, what: str) -> list:
    if what.startswith(("vjp", "grad")):
        return [f"grad {p}" for p in m.s.problem.paths]
    return list(m.s.out_paths)


def _batch(m, args: list, count: int = BATCH) -> list:
    """`count` distinct examples of each argument: 0.1 b scaled noise added to example 0
    (b = 1, 2, ...), so no two examples are equal (test_vmap_examples_are_distinct)."""
    out = []
    for a in args:
        x = to_np(a)
        sc = max(float(np.sqrt(np.mean(np.abs(x) ** 2))) if x.size else 1.0, 1e-3)
        out.append([x] + [x + 0.1 * b * sc * m.s.random(x.shape, np.iscomplexobj(x)) for b in range(1, count)])
    return out


def _unsupported(name, m, e) -> list:
    return [unsupported(name, m.dtype, e)]


def _run(name, m, call, want, tol, paths) -> list:
    """call() against want; MLX raising where plain evaluation worked: unsupported. Where a
    float32 (complex64) comparison fails and `want` is a loop (Want), the loop's own rounding
    is measured against the same loop in float64 on the CPU, and four times its largest
    value in each output is allowed on top (two float32 evaluations in different orders
    differ by about that much; a wrong rule by far more), and said in the failure."""
    import mlx.core as mx
    try:
        got = call()
        mx.eval(got)
    except Exception as e:   # MLX's missing rules raise various types
        return _unsupported(name, m, e)
    checks = _compare(name, m, got, want, tol, paths)
    if all(c.status != "fail" for c in checks) or m.dtype not in WIDE or not isinstance(want, Want):
        return checks
    floors = _rounding(want)
    if floors is None:
        return checks
    out = _compare(name, m, got, want, tol, paths, floors)
    for c in out:
        if c.status == "fail":
            c.detail = (c.detail + f" (allowed on top: 4x the loop's float32 rounding, measured against float64: "
                        f"{max(floors):.2g})").strip()
    return out


WIDE = {"float32": "float64", "complex64": "complex128"}


class Want(list):
    """A loop's stacked outputs, with the same loop in float64 (`wide`) for its rounding."""
    wide = None


def _rounding(want: Want) -> list | None:
    """Per output: 4 max |loop in the dtype - loop in float64|, or None where float64 fails."""
    import mlx.core as mx
    try:
        with mx.stream(mx.cpu):
            wide = want.wide()
            mx.eval(wide)
    except Exception:   # an op without float64: no measured floor
        return None
    out = []
    for w, v in zip(want, wide):
        d = np.abs(to_np(w) - to_np(v))
        out.append(4 * float(np.max(d, initial=0.0, where=np.isfinite(d))))
    return out


def _loop(f, examples: list, args: list, count: int = BATCH, wide: bool = False) -> list:
    """f on each example, its outputs stacked on a new leading axis (a Want)."""
    import mlx.core as mx

    def dt(a):
        return WIDE.get(_dt(a), _dt(a)) if wide else _dt(a)
    loop = [f(*[to_mx(ex[b], dt(a)) for ex, a in zip(examples, args)]) for b in range(count)]
    out = Want(mx.stack([loop[b][k] for b in range(count)]) for k in range(len(loop[0])))
    out.wide = lambda: _loop(f, examples, args, count, True)
    return out


def _stacked(examples: list, args: list, axes: list) -> list:
    return [to_mx(np.stack(ex, axis=ax), _dt(a)) for ex, ax, a in zip(examples, axes, args)]


def vmap_checks(m, tol, with_jvp: bool) -> list:
    import mlx.core as mx
    out = []
    fns = _functions(m, with_jvp)
    for what, (f, extras) in fns.items():
        args = list(m.arrays) + list(extras)
        examples = _batch(m, args)
        want = _loop(f, examples, args)
        for lead in (True, False):
            axes = [0 if lead else np.ndim(ex[0]) for ex in examples]
            name = f"vmap({what}, in_axes={'0' if lead else 'last'})"
            stacked = _stacked(examples, args, axes)
            out += _run(name, m, lambda: mx.vmap(f, in_axes=tuple(axes))(*stacked), want, tol, _paths(m, what))
        if what == "forward":
            out += _out_axes(m, tol, f, examples, args, want)
            out += _unbatched(m, tol, f, examples, args)
    out += _cotangent_inside(m, tol)
    out += _grad_inside(m, tol)
    for what in ("forward", "vjp"):
        out += _nested(m, tol, what, *fns[what])
    out += _vjp_of_vmap(m, tol)
    return out


def _out_axes(m, tol, f, examples, args, want) -> list:
    import mlx.core as mx
    moved = Want(mx.moveaxis(w, 0, -1) for w in want)
    moved.wide = lambda: [mx.moveaxis(w, 0, -1) for w in want.wide()]
    stacked = _stacked(examples, args, [0] * len(args))
    return _run("vmap(forward, out_axes=last)", m, lambda: mx.vmap(f, in_axes=0, out_axes=-1)(*stacked),
                moved, tol, _paths(m, "forward"))


def _unbatched(m, tol, f, examples, args) -> list:
    """Each operand in turn shared by the whole batch (in_axes None), the others mapped."""
    import mlx.core as mx
    out = []
    if len(args) < 2:
        return out
    for i in range(len(args)):
        fixed = [[ex[0]] * BATCH if k == i else ex for k, ex in enumerate(examples)]
        want = _loop(f, fixed, args)
        axes = tuple(None if k == i else 0 for k in range(len(args)))
        xs = [to_mx(ex[0], _dt(a)) if k == i else to_mx(np.stack(ex), _dt(a))
              for k, (ex, a) in enumerate(zip(examples, args))]
        out += _run(f"vmap(forward, input {i} unbatched)", m, lambda axes=axes, xs=xs: mx.vmap(f, in_axes=axes)(*xs),
                    want, tol, _paths(m, "forward"))
    return out


def _cotangent_inside(m, tol) -> list:
    """vmap of x -> J(x)^T f(x) (the gradient of |f|^2 / 2): the cotangent is the mapped
    function's own output, batched wherever the forward's vmap rule put the batch (an
    operation with an unbatched operand, c * f(x), would move it to axis 0 first)."""
    import mlx.core as mx
    n = len(m.arrays)

    def h(*xs):
        return mx.vjp(m.fn, list(xs), list(m.fn(*xs)))[1]
    args = list(m.arrays)
    examples = _batch(m, args)
    want = _loop(h, examples, args)
    stacked = _stacked(examples, args, [0] * n)
    return _run("vmap(vjp, cotangent from the output)", m, lambda: mx.vmap(h)(*stacked), want, tol,
                _paths(m, "vjp"))


def _grad_inside(m, tol) -> list:
    """vmap of mx.grad of L(x) = Re sum(conj(c) * f(x)) over all inputs (c the fixed
    cotangent): the cotangent is made inside the mapped function and is unbatched."""
    import mlx.core as mx
    n, cots = len(m.arrays), list(m.cots)

    def loss(*xs):
        terms = [mx.sum(mx.real(mx.conj(c) * y) if mx.issubdtype(y.dtype, mx.complexfloating) else c * y)
                 for c, y in zip(cots, m.fn(*xs))]
        return sum(terms[1:], terms[0]).astype(mx.float32)
    g = mx.grad(loss, argnums=list(range(n)))

    def h(*xs):
        r = g(*xs)
        return list(r) if isinstance(r, (list, tuple)) else [r]
    args = list(m.arrays)
    examples = _batch(m, args)
    want = _loop(h, examples, args)
    stacked = _stacked(examples, args, [0] * n)
    return _run("vmap(grad)", m, lambda: mx.vmap(h)(*stacked), want, tol, _paths(m, "vjp"))


def _nested(m, tol, what, f, extras) -> list:
    """vmap(vmap(f, in_axes=last), in_axes=0) over NEST x NEST distinct examples."""
    import mlx.core as mx
    args = list(m.arrays) + list(extras)
    grid = [_batch(m, [to_mx(ex[b], _dt(a)) for ex, a in zip(_batch(m, args, NEST), args)], NEST)
            for b in range(NEST)]   # grid[b1][arg][b2]
    want_rows = [_loop(f, grid[b1], args, NEST) for b1 in range(NEST)]
    want = Want(mx.stack([row[k] for row in want_rows]) for k in range(len(want_rows[0])))
    want.wide = lambda: [mx.stack([row.wide()[k] for row in want_rows]) for k in range(len(want_rows[0]))]
    inner_axes = tuple(np.ndim(to_np(a)) for a in args)
    stacked = [to_mx(np.stack([np.stack(grid[b1][k], axis=inner_axes[k]) for b1 in range(NEST)]), _dt(a))
               for k, a in enumerate(args)]
    return _run(f"vmap(vmap({what}))", m, lambda: mx.vmap(mx.vmap(f, in_axes=inner_axes))(*stacked),
                want, tol, _paths(m, what))


def _vjp_of_vmap(m, tol) -> list:
    """The VJP of the mapped forward (vmap inside grad) against each example's VJP."""
    import mlx.core as mx
    n = len(m.arrays)
    args = list(m.arrays) + list(m.cots)
    examples = _batch(m, args)
    f = _functions(m, False)["vjp"][0]
    want = _loop(f, examples, args)
    stacked = _stacked(examples, args, [0] * len(args))
    return _run("vmap(forward) under vjp", m, lambda: mx.vjp(mx.vmap(m.fn), stacked[:n], stacked[n:])[1], want, tol,
                _paths(m, "vjp"))


def _cut(arrays: list, first: int) -> list:
    """arrays[first:] with their first axis cut by one (where it has three or more: the
    traced shape gets no new size-1 axis, see _smaller)."""
    return [a[:-1] if i >= first and a.ndim and a.shape[0] > 2 else a for i, a in enumerate(arrays)]


def _grow(arrays: list, first: int) -> list:
    """arrays[first:] with one more row on their first axis (where it has two or more):
    0.7 of the last row plus 0.3 of the first, inside any convex domain the rows are in."""
    import mlx.core as mx
    return [mx.concatenate([a, (0.7 * a[-1:] + 0.3 * a[:1]).astype(a.dtype)])
            if i >= first and a.ndim and a.shape[0] > 1 else a for i, a in enumerate(arrays)]


def _size_one_axis(arrays: list) -> bool:
    return any(a.ndim >= 2 and 1 in a.shape for a in arrays)


CRASH_PRONE = ("shapeless compile not tried: an input has a size-1 axis, and MLX 0.32.4's shapeless "
               "compile of a reduction over such an axis kills the process (SIGSEGV/SIGFPE); "
               "gradcheck(..., isolated=True) in a process of its own tries it")


def _reshaped(m, f, extras, isolated, change) -> list | str | None:
    """Arguments at another shape fn runs at (the positional inputs' first axis changed by
    `change`; the cotangents or tangents changed alike or kept), None, or why it is not tried."""
    import mlx.core as mx
    if m.s.problem.module is not None:
        # each call installs the parameters with module.update: state mutated inside the
        # traced function, which gives wrong values under shapeless compile where the
        # same graph written as a pure function is right (MLX 0.32.4): not tried
        return None
    other = change(m.arrays, 0)
    if all(c is a for c, a in zip(other, m.arrays)):
        return None
    # MLX 0.32.4 crashes the process (SIGSEGV/SIGFPE) evaluating a reduction over a
    # size-1 axis under shapeless compile (mx.sum(x, axis=0) for x of shape (1, 4)):
    # in the caller's own process such inputs are not tried, and the report says so
    if not isolated and _size_one_axis(list(m.arrays) + list(extras)):
        return CRASH_PRONE
    try:
        shapes = [y.shape for y in m.fn(*other)]
    except Exception:   # fn does not run at that shape: not tried
        return None
    for ext in (change(extras, 0), list(extras)):
        # the cotangents must have the outputs' shapes there: MLX's vjp does not check, and
        # one that broadcasts would make the comparison with eager meaningless
        if [e.shape for e in ext] != shapes:
            continue
        try:
            mx.eval(f(*other, *ext))
            return other + ext
        except Exception:   # fn does not run at that shape: try the next, else skip
            continue
    return None


def _smaller(m, f, extras, isolated=False):
    return _reshaped(m, f, extras, isolated, _cut)


def compile_checks(m, tol, with_jvp: bool, isolated: bool = False) -> list:
    import mlx.core as mx
    out = []
    for what, (f, extras) in _functions(m, with_jvp).items():
        args = list(m.arrays) + list(extras)
        want = f(*args)
        out += _run(f"compile({what})", m, lambda: _fresh(f)(*args), want, tol, _paths(m, what))
        if what == "vjp":
            out += _shapeless(m, tol, f, extras, args, want, isolated)
    return out


def _fresh(f, **kw):
    """mx.compile of a new function object: MLX caches compiled traces by the function's
    id, so compiling `f` again would reuse an earlier trace (at another shape)."""
    import mlx.core as mx
    return mx.compile(lambda *a: f(*a), **kw)


def _shapeless(m, tol, f, extras, args, want, isolated) -> list:
    """compile(shapeless=True) traced at a smaller shape and called at the checked one;
    traced at the checked shape and called at a smaller and a larger one; eager at each."""
    import mlx.core as mx
    # a gradient of the wrong shape (a custom rule's defect, failed by the vjp check)
    # can crash MLX's shapeless compile: not attempted then
    if any(g.shape != p.shape for g, p in zip(m.grads, m.s.points)):
        return []
    small = _reshaped(m, f, extras, isolated, _cut)
    if isinstance(small, str):
        return [Check("compile(vjp, shapeless)", m.dtype, "all inputs", "all outputs", "not tried", detail=small)]
    large = _reshaped(m, f, extras, isolated, _grow)
    out, paths = [], _paths(m, "vjp")
    if small is not None:
        def traced_small():
            cf = _fresh(f, shapeless=True)
            mx.eval(cf(*small))
            return cf(*args)
        out += _run("compile(vjp, shapeless)", m, traced_small, want, tol, paths)
    for label, other in (("smaller", small), ("larger", large)):
        if other is None:
            continue
        def traced_here(other=other):
            cf = _fresh(f, shapeless=True)
            mx.eval(cf(*args))
            return cf(*other)
        out += _run(f"compile(vjp, shapeless, traced here, called {label})", m, traced_here, f(*other), tol, paths)
    return out
