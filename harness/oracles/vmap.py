"""vmap: mx.vmap of the VJP over a batch of two examples, every differentiated
operand and the cotangent mapped along a new leading axis: example 0 is the
scenario, example 1 the same operands with cotangent VMAP_SCALE g. The batch is
a stacked copy (contiguous): a layout defect is the plain VJP's to show, so a
vmap failure is about vmap. Each example's gradients against the float64
reference (example 1's are VMAP_SCALE times example 0's: the VJP is linear in
g); the forward under vmap is not the VJP's, and is not checked here (status:
vmap raises where the forward maps)."""
from __future__ import annotations

import numpy as np

from ..core import checks
from . import bridge, recheck as rc, transforms
from .base import Oracle, Repro

VMAP_SCALE = -2.0   # example 1's cotangent, as a multiple of the scenario's: exact in every dtype


def measure(t, call) -> list:
    why = transforms.skip(t, "vmap", "vmap")
    if why:
        return t.note("vmap", why)
    mx = bridge.mx()
    g = call.cotangent(t.cotangent)
    batch = [mx.stack([p, p]) for p in call.primals]
    cots = mx.stack([g, (VMAP_SCALE * g).astype(g.dtype)])
    try:
        res = mx.vmap(lambda *a: call.vjp_outputs(*a), in_axes=tuple([0] * (len(batch) + 1)))(*batch, cots)
        mx.eval(res)
    except Exception as e:
        return transforms.raised(t, "vmap", e, lambda: mx.vmap(call, in_axes=tuple([0] * len(batch)))(*batch))
    res = [bridge.to_numpy(r) for r in res]
    if any(r.shape[:1] != (2,) for r in res):
        return [checks.compare("vmap:batch", np.array(res[0].shape), np.array((2,) + res[0].shape[1:]),
                               0.0, 0.0, kind="vmap")]
    return (transforms.compared(t, [r[0] for r in res], "vmap", "vmap", suffix="#0", forward=False)
            + transforms.compared(t, [r[1] for r in res], "vmap", "vmap", VMAP_SCALE, "#1", forward=False))


def recheck(c: dict, ctx) -> tuple:
    """vmap:<value>#<example>: the reference value it names (example 1's gradients
    times VMAP_SCALE); vmap:batch (shapes, recorded as values) from its own values."""
    if c["name"] == "vmap:batch":
        return rc.self_consistent(c, ctx)
    return transforms.recheck_values(c, ctx, "vmap", {"#0": 1.0, "#1": VMAP_SCALE})


def wanted(s, exp: dict, seed: int) -> tuple:
    """The reproducer's expected values: the forward does not depend on the cotangent;
    the gradients are linear in it."""
    grads = {f"grad:{n}": exp["grad:" + n] for n in s.wrt}
    return {f"vmap:{k}#{i}": v * (VMAP_SCALE if i and k != "forward" else 1.0)
            for k, v in {"forward": exp["forward"], **grads}.items() for i in (0, 1)}, None


REPRO = Repro(
    measure='''batch, cots = [mx.stack([x, x]) for x in ({wrt},)], mx.stack([g, ({scale} * g).astype(g.dtype)])
try:   # each output of the mapped VJP (the forward, then each gradient) for examples 0 and 1
    res = mx.vmap(lambda *a: (lambda o: [*o[0], *o[1]])(mx.vjp(f, list(a[:-1]), [a[-1]])))(*batch, cots)
    mx.eval(got := dict(zip(want, [r[k] if r.shape[:1] == (2,) else r for r in res for k in (0, 1)])))
except Exception as e:
{fallback}''',
    wanted=wanted, plain="mx.vmap(f)(*batch)",
    how=f"\n# vmap over two examples: the cotangent g, then {VMAP_SCALE:g} g (the VJP is linear in g)",
    fields=(("scale", repr(VMAP_SCALE)),))

ORACLE = Oracle("vmap", "mx.vmap of the VJP over two examples (cotangents g and -2 g, operands stacked) against "
                        "the float64 reference of each (status: vmap raises where the forward maps); one batched "
                        "call, everywhere",
                ("vmap",), ("run", "fuzz", "gate", "validator"), measure, recheck, confirms=True,
                gradient=transforms.gradient, repro=REPRO)
