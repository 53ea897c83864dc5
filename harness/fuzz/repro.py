"""Standalone reproducer scripts for findings (probe conventions: mlx + numpy +
stdlib only, --device cpu|gpu, one VERDICT line, exit 0 absent / 1 present /
125 cannot test, so `git bisect run` can drive them).

The script embeds the scenario and the float64 expected values computed at
generation time, recomputes those values with its own small float64 loops
(and refuses to judge if the two disagree), then runs MLX in a child process
so that a VJP that kills the process still yields a verdict. It compares MLX
against the true reference, never against recorded MLX values, so it exits 0
once the defect is fixed.
"""
from __future__ import annotations


from .. import ops
from ..core import checks, jsonio
from ..core.scenario import Scenario

HEADER = '''#!/usr/bin/env python3
"""mlx-vjpcheck fuzz finding {signature}

{op}: {gradient} flagged by the {oracle} oracle ({kind}); call form {form}.
All oracles that flagged it: {oracles}. Minimal counterexample: {size} operand elements.

Exit 0: defect absent, 1: defect present, 125: cannot test (git bisect skip).
Standalone: mlx + numpy + the standard library.
"""
import argparse
import json
import subprocess
import sys

import numpy as np


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line on stderr, exit 2."""

    def error(self, message):
        self.exit(2, f"{{self.prog}}: {{message}} (see --help)\\n")


def _nonfinite(d):
    """Strict JSON carries NaN and infinities as {{"nonfinite": "nan" | "inf" | "-inf"}}."""
    if len(d) == 1 and d.get("nonfinite") in ("nan", "inf", "-inf"):
        return float(d["nonfinite"])
    return d


SCENARIO = json.loads(r"""{scenario}""", object_hook=_nonfinite)
# float64 reference values computed when the finding was made
EXPECTED = json.loads(r"""{expected}""", object_hook=_nonfinite)
ATOL, RTOL = {atol!r}, {rtol!r}
EXACT_ZEROS = {exact!r}   # float32 with small integers on an op whose sums are then exact
HAS_SORTED_FLAG = {has_flag!r}
'''

BODY = r'''

# --- operands: row-major storage, then the views MLX sees ---------------------

def storage(t, dtype=np.float64):
    return np.asarray(t["values"], dtype=dtype).reshape(t["shape"])


def apply_view(x, v, xp):
    if v["op"] == "slice":
        return x[tuple(slice(*spec) for spec in v["index"])]
    if v["op"] == "transpose":
        return xp.transpose(x, tuple(v["axes"]))
    if v["op"] == "reshape":
        return xp.reshape(x, tuple(v["shape"]))
    if v["op"] == "broadcast_to":
        return xp.broadcast_to(x, tuple(v["shape"]))
    if v["op"] == "expand_dims":
        return xp.expand_dims(x, int(v["axis"]))
    raise ValueError("unknown view " + v["op"])


def logical(t, dtype=np.float64):
    x = storage(t, dtype)
    for v in t["views"]:
        x = apply_view(x, v, np)
    return np.array(x, dtype=dtype)


def indices():
    get = lambda k: None if SCENARIO[k] is None else logical(SCENARIO[k], np.int64)
    return get("lhs_indices"), get("rhs_indices")


def reference():
    inp = {n: logical(t) for n, t in SCENARIO["operands"].items()}
    lhs, rhs = indices()
    y = ref_forward(inp, lhs, rhs, SCENARIO["params"])
    g = np.ones_like(y) if SCENARIO["cotangent"] is None else logical(SCENARIO["cotangent"])
    grads = ref_vjp(inp, g, lhs, rhs, SCENARIO["params"])
    return y, g, {n: grads[n] for n in SCENARIO["wrt"]}


# --- the MLX side, in a child process -----------------------------------------

def emit(obj):
    print("@@" + json.dumps(obj), flush=True)


def child(device, sorted_flag):
    import mlx.core as mx
    mx.set_default_device(mx.gpu if device == "gpu" else mx.cpu)
    ops = {}
    for n, t in SCENARIO["operands"].items():
        if n in INTEGER_OPERANDS:
            ops[n] = logical(t, np.int64)
            continue
        x = mx.array(storage(t).astype(np.float32), dtype=getattr(mx, t["dtype"]))
        mx.eval(x)   # real storage first, so the views below are views onto it
        for v in t["views"]:
            x = apply_view(x, v, mx)
        ops[n] = x
    lhs, rhs = (None if i is None else mx.array(i.astype(np.uint32)) for i in indices())
    wrt = SCENARIO["wrt"]
    dtype = ops[wrt[0]].dtype

    def f(*diff):
        return mlx_call(mx, dict(ops, **dict(zip(wrt, diff))), lhs, rhs, sorted_flag,
                        SCENARIO["params"])
    emit({"stage": "forward"})
    try:
        y = f(*[ops[n] for n in wrt])
        mx.eval(y)
    except Exception as e:
        emit({"forward_error": f"{type(e).__name__}: {e}"})
        return
    emit({"forward": np.array(y.astype(mx.float32)).tolist()})
    _, g, _ = reference()
    emit({"stage": "vjp"})
    try:
        _, grads = mx.vjp(f, [ops[n] for n in wrt], [mx.array(g.astype(np.float32), dtype=dtype)])
        mx.eval(grads)
    except Exception as e:
        emit({"vjp_error": f"{type(e).__name__}: {e}"})
        return
    emit({"grads": {n: np.array(d.astype(mx.float32)).tolist() for n, d in zip(wrt, grads)}})


def run_child(device, sorted_flag):
    cmd = [sys.executable, __file__, "--child", "--device", device]
    proc = subprocess.run(cmd + (["--sorted"] if sorted_flag else []), capture_output=True,
                          text=True, timeout=600)
    res, other = {"stage": None}, []
    for line in proc.stdout.splitlines():   # native libraries may print here too
        if line.startswith("@@"):
            res.update(json.loads(line[2:]))
        elif line.strip():
            other.append(line.strip())
    if "grads" not in res and not any(k.endswith("_error") for k in res):
        tail = (other + proc.stderr.strip().splitlines() or [""])[-1][:200]
        res["died"] = f"process exited with code {proc.returncode} during the {res['stage']}" + (
            f" ({tail})" if tail else "")
    return res


# --- judging --------------------------------------------------------------------

def fmt(x):
    x = np.asarray(x, dtype=np.float64)
    flat = x.ravel()
    body = ", ".join(format(v, ".10g") for v in flat[:48]) + (", ..." if flat.size > 48 else "")
    return f"shape {tuple(x.shape)} [{body}]"


def close(got, exp):
    """Where the reference is finite: within ATOL + RTOL |exp|; where it is
    non-finite, the same non-finite value (NaN for NaN)."""
    got, exp = np.asarray(got, dtype=np.float64), np.asarray(exp, dtype=np.float64)
    if got.shape != exp.shape:
        return False
    fin = np.isfinite(exp)
    if not np.all((np.isnan(got) & np.isnan(exp))[~fin] | (got == exp)[~fin]):
        return False
    g, e = got[fin], exp[fin]
    if not np.all(np.isfinite(g)) or not np.all(np.abs(g - e) <= ATOL + RTOL * np.abs(e)):
        return False
    return not EXACT_ZEROS or bool(np.all(got[exp == 0] == 0))


def self_check(y, grads):
    """The embedded expected values and this script's own loops must agree. Two
    float64 computations of the same maths agree to ~1e-12; where either side
    differentiates numerically, each is within 3e-9 of the truth (the stated
    bound of the harness's differences, and of differences_vjp below)."""
    pairs = [(y, EXPECTED["forward"])] + [(grads[n], EXPECTED["grad:" + n]) for n in grads]
    return all(np.asarray(a).shape == np.asarray(b).shape
               and np.allclose(a, b, rtol=1e-8, atol=1e-8, equal_nan=True) for a, b in pairs)


def differences_vjp(forward, inp, g, wrt):
    """J^T g of a float64 forward by central differences at h = 2^-4 .. 2^-7,
    Richardson-extrapolated (error O(h^8)), one input coordinate at a time. For
    snippets whose ref_vjp is not written out by hand."""
    out = {}
    for name in wrt:
        x = np.asarray(inp[name], dtype=np.float64)
        grad = np.zeros(x.size)
        for i in range(x.size):
            table = []
            for k in range(4):
                h = 2.0 ** (-4 - k)
                vals = []
                for sign in (1.0, -1.0):
                    bumped = x.copy().reshape(-1)
                    bumped[i] += sign * h
                    vals.append(np.sum(g * forward(dict(inp, **{name: bumped.reshape(x.shape)}))))
                row = [(vals[0] - vals[1]) / (2 * h)]
                for j in range(1, k + 1):
                    row.append(row[j - 1] + (row[j - 1] - table[k - 1][j - 1]) / (4 ** j - 1))
                table.append(row)
            grad[i] = table[-1][-1]
        out[name] = grad.reshape(x.shape)
    return out


def describe(res):
    if "died" in res:
        return res["died"]
    if "forward_error" in res:
        return "forward raised " + res["forward_error"]
    if "vjp_error" in res:
        return "VJP raised " + res["vjp_error"]
    return "forward " + fmt(res["forward"]) + "; " + "; ".join(
        f"d{n} {fmt(v)}" for n, v in res["grads"].items())


def agrees(res, y, grads):
    return ("grads" in res and close(res["forward"], y)
            and all(close(res["grads"][n], grads[n]) for n in grads))


def main():
    ap = OneLineParser(description=__doc__)
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sorted", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.device, args.sorted)
        return 0
    try:
        import mlx.core as mx
    except ImportError:
        print("cannot test: mlx is not installed")
        return 125
    if args.device == "gpu" and not mx.is_available(mx.gpu):
        print("cannot test: no GPU backend (Metal/CUDA) is available in this MLX build")
        return 125
    print(f"mlx {mx.__version__}, device {args.device}")
    print(f"call: {SCENARIO['op']} sorted_indices={SCENARIO['sorted_indices']} "
          f"params={SCENARIO['params']} wrt={SCENARIO['wrt']}")
    for n, t in SCENARIO["operands"].items():
        print(f"input {n}: {t['dtype']} views={t['views']} logical {fmt(logical(t))}")
    lhs, rhs = indices()
    print(f"lhs_indices: {'omitted' if lhs is None else fmt(lhs)}; "
          f"rhs_indices: {'omitted' if rhs is None else fmt(rhs)}")
    y, g, grads = reference()
    print(f"cotangent: {fmt(g)}")
    print("expected (float64): forward " + fmt(y) + "; "
          + "; ".join(f"d{n} {fmt(v)}" for n, v in grads.items()))
    if not self_check(y, grads):
        print("VERDICT: cannot test (embedded expected values disagree with this script's reference)")
        return 125
    res = run_child(args.device, SCENARIO["sorted_indices"])
    print(f"MLX sorted_indices={SCENARIO['sorted_indices']}: {describe(res)}")
    if SCENARIO["sorted_indices"] and HAS_SORTED_FLAG:
        ctl = run_child(args.device, False)
        print(f"MLX sorted_indices=False (control): {describe(ctl)} -> "
              + ("agrees" if agrees(ctl, y, grads) else "DISAGREES"))
    if "forward_error" in res or res.get("stage") == "forward":
        print("VERDICT: cannot test (the forward call itself failed)")
        return 125
    if agrees(res, y, grads):
        print("VERDICT: defect absent (MLX agrees with the float64 reference)")
        return 0
    print(f"VERDICT: defect present ({describe(res)[:160]}; expected the float64 reference)")
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a reproducer bug must not read as "defect present"
        print(f"VERDICT: cannot test (reproducer error: {type(e).__name__}: {e})".replace("\n", " "))
        sys.exit(125)
'''


def render(finding) -> str:
    s = Scenario.from_dict(finding.scenario)
    info = ops.get(s.op)
    dtype = ops.dtype_of(s)
    atol, rtol = checks.tolerance(dtype)
    detail = finding.detail()
    head = HEADER.format(
        signature=finding.signature, op=s.op, gradient=finding.gradient, oracle=finding.oracle,
        kind=finding.kind, form=finding.form, oracles=", ".join(finding.oracles),
        size=finding.size, scenario=jsonio.dumps(finding.scenario), expected=jsonio.dumps(detail["expected"]),
        atol=atol, rtol=rtol, exact=dtype == "float32" and info.exact, has_flag=info.has_sorted_flag)
    if info.repro_source is None:
        raise ValueError(f"op {s.op!r} has no reproducer snippet")
    return head + "\n" + info.repro_source + BODY
