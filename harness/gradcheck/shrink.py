"""Best effort, within a time budget: a smaller and simpler failing input.

Candidates, kept only while the same check (transform, dtype, input) still
fails: each positional array leaf's first axis cut to one element, then to
half; then the values of all of them rounded to halves, then to integers.
Module parameters keep their shapes (the module fixes them). The search is
greedy and stops at the budget (options.shrink seconds).
"""
from __future__ import annotations

import time

import numpy as np

from . import reproducer, trees


def _same(a, b) -> bool:
    return (a.transform, a.dtype, a.input) == (b.transform, b.dtype, b.input)


def _fails(gradcheck, fn, inputs, opts, target) -> object:
    name = target.transform.replace("order 2 ", "").split("(")[0].split(" ")[0]
    try:
        r = gradcheck(fn, inputs, order=2 if target.transform.startswith("order 2") else 1,
                      transforms=(name,), dtypes=(target.dtype,), tolerances=opts.tolerances,
                      fast=None if opts.fast is None else opts.fast, projections=opts.projections,
                      seed=opts.seed, raise_exception=False, shrink=0, device=opts.device)
    except Exception:   # the candidate is outside fn's domain (a shape it rejects)
        return None
    return next((c for c in r.failures if _same(c, target)), None) and r


def _candidates(inputs):
    import mlx.core as mx
    leaves, build = trees.split(tuple(inputs), "inputs")
    values = [x for _, x in leaves]
    for k, x in enumerate(values):
        for n in (1, x.shape[0] // 2) if x.ndim and x.shape[0] > 1 else ():
            if 0 < n < x.shape[0]:
                yield f"{leaves[k][0]}: first axis {x.shape[0]} -> {n}", build(values[:k] + [x[:n]] + values[k + 1:])
    for step, what in ((0.5, "halves"), (1.0, "integers")):
        rounded = [mx.array(np.round(np.asarray(x.astype(mx.float32) if x.dtype != mx.complex64 else x) / step)
                            * step).astype(x.dtype) if isinstance(x, mx.array) else np.round(x / step) * step
                   for x in values]
        yield f"values rounded to {what}", build(rounded)


def minimise(gradcheck, fn, inputs, opts, report) -> None:
    """`gradcheck` is the entry point itself (passed in: this module is below api)."""
    target = report.failures[0]
    deadline, steps = time.monotonic() + opts.shrink, []
    current, best = tuple(inputs), None
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for what, cand in _candidates(current):
            if time.monotonic() >= deadline:
                break
            r = _fails(gradcheck, fn, cand, opts, target)
            if r is not None and what not in steps:
                current, best, progress = cand, r, True
                steps.append(what)
                break
    final = best or report
    check = next(c for c in final.failures if _same(c, target))
    report.shrunk = ("; ".join(steps) + f": {check.line()}") if steps else ""
    report.reproducer = reproducer.script(fn, current, check, final.context) or ""
