"""compile: mx.compile of the VJP (forward and gradients) against the float64
reference, on the scenario's own operands and views (status: compile raises
where eager works). Not in `run`: on the CPU each new fused kernel is a g++ -O3
build (2-3 s, cached under $TMPDIR/mlx/<version>/cpu), about 150 for a cold
catalog run (3 min); the fuzzer compiles one case in COMPILE_EVERY."""
from __future__ import annotations

from . import bridge, transforms
from .base import Oracle, Repro

COMPILE_EVERY = 4   # the fuzzer compiles one case in this many (by its seed)


def measure(t, call) -> list:
    why = transforms.skip(t, "compile", "compile")
    if why is None and t.context == "fuzz" and t.seed % COMPILE_EVERY:
        why = f"sampled out (the fuzzer compiles one case in {COMPILE_EVERY})"
    if why:
        return t.note("compile", why)
    mx = bridge.mx()
    try:
        res = mx.compile(lambda *a: call.vjp_outputs(*a))(*call.primals, call.cotangent(t.cotangent))
        mx.eval(res)
    except Exception as e:
        return transforms.raised(t, "compile", e, lambda: mx.compile(call)(*call.primals))
    return transforms.compared(t, [bridge.to_numpy(r) for r in res], "compile", "compile")


def recheck(c: dict, ctx) -> tuple:
    """compile:<value>: the reference value it names; compile:status a status check."""
    return transforms.recheck_values(c, ctx, "compile", {"": 1.0})


def wanted(s, exp: dict, seed: int) -> tuple:
    """The reproducer's expected values: the forward and each gradient, under compile."""
    return {"compile:forward": exp["forward"], **{f"compile:grad:{n}": exp["grad:" + n] for n in s.wrt}}, None


REPRO = Repro(
    measure='''try:
    res = mx.compile(lambda *a: (lambda o: [*o[0], *o[1]])(mx.vjp(f, list(a[:-1]), [a[-1]])))({wrt}, g)
    mx.eval(got := dict(zip(want, res)))
except Exception as e:
{fallback}''',
    wanted=wanted, plain="mx.compile(f)({wrt})")

ORACLE = Oracle("compile", "mx.compile of the VJP against the float64 reference (status: compile raises where "
                           "eager works); not in run: each new fused CPU kernel is a g++ -O3 build (2-3 s, "
                           "cached under $TMPDIR/mlx/<version>/cpu), about 150 for a cold catalog run (3 min)",
                ("compile",), ("fuzz", "gate", "validator"), measure, recheck, confirms=True,
                gradient=transforms.gradient, repro=REPRO)
