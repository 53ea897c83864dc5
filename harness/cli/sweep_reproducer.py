"""A first reproducer for a sweep finding (`register add SWEEP.json --finding N`), in
the house form of probes/sweep/: mlx and numpy only, the sweep's inputs written out,
the transform against what it must equal, exit 0 absent / 1 present / 125 cannot test.

Generated where the case is plain: an elementwise entry of one or two arrays (the API
table's `_unary`/`_binary` forms, so the call is `mx.<name>(*L)`), no view corner, and
a transform this module writes: compile (shapeless or not) and vmap (either in_axes)
of the forward, VJP or JVP against eager, and, at a corner of generic values, the VJP
or JVP against float64 central differences of MLX's own forward on the CPU (where its
steps disagree the point is not smooth: exit 125). Anything else (a crash, a layer, a
call with parameters, second order) gets (None, why): the caller asks for a reproducer
reduced by hand. A generated one is run before it is registered (register_sweep.py).
"""
from __future__ import annotations

import re

import numpy as np

HEAD = '''#!/usr/bin/env python3
"""{short} / {klass}: {title}
Minimal input: {minimal}. Generated from the sweep's case by mlx-vjpcheck register add.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

f = {name}
L = [{inputs}]
rng = np.random.default_rng(0)
n = len(L)
extra = {{"forward": [], "vjp": [mx.array(rng.standard_normal(f(*L).shape)).astype(f(*L).dtype)],
         "jvp": [mx.array(rng.standard_normal(x.shape)).astype(x.dtype) for x in L]}}
fns = {{"forward": lambda *a: [f(*a)], "vjp": lambda *a: mx.vjp(f, list(a[:n]), list(a[n:]))[1],
       "jvp": lambda *a: mx.jvp(f, list(a[:n]), list(a[n:]))[1]}}


def same(got, want, what):
    g, w = [[np.array(x.astype(mx.float32), dtype=np.float64) for x in xs] for xs in (got, want)]
    close = lambda a, b: np.allclose(a, b, rtol=1e-3, atol=1e-3 * max(1.0, np.abs(b).max(initial=0)))
    ok = len(g) == len(w) and all(a.shape == b.shape and close(a, b) for a, b in zip(g, w))
    print(what, "MLX", [a.shape for a in g], "vs", [b.shape for b in w], "ok" if ok else "DIFFERS")
    sys.exit(print("VERDICT: defect " + ("absent" if ok else "present")) or (0 if ok else 1))


'''

COMPILE = '''g, args = fns["{what}"], L + extra["{what}"]
want = g(*args)
cf = mx.compile(g, shapeless={shapeless})
try:
    if {shapeless}:   # traced at a smaller shape (first axis cut by one), then called at the sweep's
        mx.eval(cf(*[a[:-1] if a.ndim and a.shape[0] > 2 else a for a in args]))
    got = cf(*args)
    mx.eval(got)
except Exception as e:
    sys.exit(print(f"VERDICT: defect absent (compile refused: {{type(e).__name__}}: {{e}})") or 0)
same(got, want, "compile({what}{label}) vs eager:")
'''

VMAP = '''g, args = fns["{what}"], L + extra["{what}"]
ex = [[a] + [a + 0.1 * b * mx.array(rng.standard_normal(a.shape)).astype(a.dtype) for b in (1, 2)] for a in args]
loop = [g(*[e[b] for e in ex]) for b in range(3)]
want = [mx.stack([loop[b][k] for b in range(3)]) for k in range(len(loop[0]))]
axes = tuple(0 if {lead} else a.ndim for a in args)
got = mx.vmap(g, in_axes=axes)(*[mx.stack(e, axis=ax) for e, ax in zip(ex, axes)])
same(got, want, "vmap({what}, in_axes={label}) vs a loop:")
'''

DIFFERENCES = '''# the rule: MLX's own forward in float64 on the CPU, central differences along each direction
# (Richardson of steps h and h/2: MLX's float64 kernels are exact to about 1e-7 only, so h is not tiny)
f64 = lambda *a: np.array(f(*[mx.array(x, dtype=mx.float64) for x in a]), dtype=np.float64)
P = [np.array(x.astype(mx.float32), dtype=np.float64) for x in L]
h = 1e-2 * max(1.0, max(np.abs(p).max(initial=0) for p in P))
D = lambda u, h: (f64(*[p + h * v for p, v in zip(P, u)]) - f64(*[p - h * v for p, v in zip(P, u)])) / (2 * h)
def d(u):   # d f(P)[u]; where the steps disagree f is not smooth there (a kink, a jump) and nothing is judged
    a, b, c = D(u, h), D(u, h / 2), D(u, h / 100)
    if not all(np.allclose(x, b, rtol=1e-2, atol=1e-2 * max(1.0, np.abs(b).max(initial=0))) for x in (a, c)):
        sys.exit(print("cannot test: not smooth within the step at this point") or 125)
    return (4 * b - a) / 3
'''

VJP = DIFFERENCES + '''g = np.array(extra["vjp"][0].astype(mx.float32), dtype=np.float64)
unit = lambda i, k: [np.eye(1, p.size, k)[0].reshape(p.shape) if j == i else np.zeros_like(p) for j, p in enumerate(P)]
want = [np.array([np.sum(g * d(unit(i, k))) for k in range(P[i].size)]).reshape(P[i].shape) for i in range(n)]
same(fns["vjp"](*L, *extra["vjp"]), [mx.array(w) for w in want], "vjp vs float64 differences:")
'''

JVP = DIFFERENCES + '''want = d([np.array(t.astype(mx.float32), dtype=np.float64) for t in extra["jvp"]])
same(fns["jvp"](*L, *extra["jvp"]), [mx.array(want)], "jvp vs float64 differences:")
'''

TRANSFORM = re.compile(r"(compile|vmap)\((forward|vjp|jvp)(?:, (shapeless|in_axes=(0|last)))?\)|(vjp|jvp)")


def _plain(entry) -> bool:
    """The entry is the API table's one- or two-array elementwise form: its call is f(*arrays)."""
    from ..sweep import api
    forms = {api._unary("mx.abs").call.__code__, api._binary("mx.add").call.__code__}
    return getattr(entry.call, "__code__", None) in forms


def _array(x: np.ndarray, dtype: str) -> str:
    items = ", ".join(repr(float(v)) for v in x.reshape(-1))
    return f"mx.array(np.array([{items}]).reshape({tuple(x.shape)!r})).astype(mx.{dtype})"


def _case(record: dict):
    """(entry, corner, numpy inputs) of the record, or (None, why)."""
    from ..sweep import corners, measure
    entry = measure.BY_ID.get(record.get("entry"))
    if entry is None or not _plain(entry):
        return None, "only the API table's elementwise one- and two-array forms are generated"
    corner = next((c for c in corners.corners(entry) if c.name == record.get("corner")), None)
    if corner is None or corner.view or corner.dtype not in ("float32", "float16", "bfloat16"):
        return None, "a view, complex or unknown corner"
    case = corners.case(entry, corner, np.random.default_rng(record.get("seed", 0)))
    return (entry, corner, case.inputs), ""


def _body(transform: str) -> str | None:
    m = TRANSFORM.fullmatch(transform)
    if m is None:
        return None
    if m.group(5):
        return VJP if m.group(5) == "vjp" else JVP
    kind, what, opt, axis = m.groups()[:4]
    if kind == "compile" and (opt or "").startswith("in_axes") or kind == "vmap" and not axis:
        return None
    if kind == "compile":
        shapeless = opt == "shapeless"
        return COMPILE.format(what=what, shapeless=shapeless, label=", shapeless" if shapeless else "")
    return VMAP.format(what=what, lead=axis == "0", label=axis)


def render(f, d) -> tuple:
    """(script, "") or (None, why not)."""
    body = _body(f.transform)
    if body is None:
        return None, f"transform {f.transform!r} is not one this generator writes"
    got, why = _case(f.record)
    if got is None:
        return None, why
    entry, corner, inputs = got
    if body in (VJP, JVP) and corner.fill != "generic":
        return None, ("a special-value corner: the generated differences judge generic points only (kinks, "
                      "jumps and ties need the sweep's own oracle)")
    head = HEAD.format(short=d.op, klass=d.klass, title=d.title.replace('"""', "'''"),
                       minimal=d.minimal.replace('"""', "'''"), name=entry.name,
                       inputs=", ".join(_array(x, corner.dtype) for x in inputs))
    return head + body, ""


__all__ = ["render"]
