"""Replacements for mlx.core functions, installed inside a reproducer's process (a wrapper
script runs the reproducer with runpy under `installed(name)`), so that one unchanged
script can be run against a rule known to be right or a transform known to be wrong.

FIXED: an op whose MLX rule a fuzz campaign found wrong under a transform, wrapped in
mx.custom_function with a correct rule written in MLX ops that compose with every
transform (the negative control: the finding's reproducer must then print "absent").
BROKEN: one transform whose every output is off by one (the reproducer of a finding
of that transform must see it, a first-order one must not).
"""
from __future__ import annotations

import contextlib

import numpy as np


def _mx():
    import mlx.core as mx
    return mx


def _one(seq):
    """custom_function hands one array, or a tuple of them: always a list."""
    return list(seq) if isinstance(seq, (list, tuple)) else [seq]


def _sum_to(g, shape):
    """g summed over the axes it was broadcast along to come from `shape`."""
    mx = _mx()
    lead = tuple(range(g.ndim - len(shape)))
    g = mx.sum(g, axis=lead) if lead else g
    ones = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
    return mx.sum(g, axis=ones, keepdims=True) if ones else g


def _full(orig):
    def full(shape, vals, *args, **kw):
        mx = _mx()
        f = mx.custom_function(lambda v: orig(shape, v, *args, **kw))

        @f.vjp
        def rule(primals, cotangents, outputs):   # each output copies v: d v = g summed over its copies
            (v,), (g,) = _one(primals), _one(cotangents)
            return (_sum_to(g, v.shape),)
        return f(vals)
    return full


def _slice_update(orig):
    def slice_update(a, update, start, axes):
        mx = _mx()
        region = [slice(None)] * a.ndim
        # start is a constant of the script, never a traced value: static slices compose with vmap
        for ax, lo in zip(axes, np.array(start).ravel().tolist()):
            region[ax] = slice(int(lo), int(lo) + update.shape[ax])
        keep = np.ones(a.shape, dtype=np.float32)
        keep[tuple(region)] = 0
        f = mx.custom_function(lambda x, u: orig(x, u, start, axes))

        @f.vjp
        def rule(primals, cotangents, outputs):   # d a = g outside the region, d u = g inside it
            (g,) = _one(cotangents)
            return (g * mx.array(keep).astype(g.dtype), g[tuple(region)])
        return f(a, update)
    return slice_update


def _addmm(orig):
    def addmm(c, a, b, alpha=1.0, beta=1.0):
        mx = _mx()
        f = mx.custom_function(lambda c_, a_, b_: orig(c_, a_, b_, alpha=alpha, beta=beta))

        @f.jvp
        def rule(primals, tangents):   # J u = beta dc + alpha (da b + a db)
            (_, a_, b_), (dc, da, db) = _one(primals), _one(tangents)
            return (beta * dc + alpha * (da @ b_ + a_ @ db),)
        return f(c, a, b)
    return addmm


FIXED = {"full": _full, "slice_update": _slice_update, "addmm": _addmm}


def _plus_one(res):
    return [r + 1 for r in res] if isinstance(res, (list, tuple)) else res + 1


def _broken_maker(orig):
    """vmap, compile, grad: the function they return gives every output plus one."""
    def transform(fn, *args, **kw):
        made = orig(fn, *args, **kw)
        return lambda *xs: _plus_one(made(*xs))
    return transform


def _broken_jvp(orig):
    def jvp(fn, primals, tangents):
        outs, jvps = orig(fn, primals, tangents)
        return outs, _plus_one(jvps)
    return jvp


# transform oracle -> (the mlx.core function it calls, its broken version)
BROKEN = {"vmap": ("vmap", _broken_maker), "compile": ("compile", _broken_maker),
          "second_order": ("grad", _broken_maker), "forward_mode": ("jvp", _broken_jvp)}


@contextlib.contextmanager
def installed(name: str):
    """mlx.core with FIXED[name] or BROKEN[name] in place, restored on the way out (the
    script driver shares modules between the scripts it runs)."""
    mx = _mx()
    attr, make = BROKEN[name] if name in BROKEN else (name, FIXED[name])
    orig = getattr(mx, attr)
    setattr(mx, attr, make(orig))
    try:
        yield
    finally:
        setattr(mx, attr, orig)
