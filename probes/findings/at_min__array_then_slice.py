#!/usr/bin/env python3
"""mlx-vjpcheck fuzz finding at_min__grad-v__reference__wrong-value__scatter_rows_slice

at_min: grad-v flagged by the reference oracle (wrong-value); call form scatter_rows_slice.
All oracles that flagged it: reference. Minimal counterexample: 4 operand elements.

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
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def _nonfinite(d):
    """Strict JSON carries NaN and infinities as {"nonfinite": "nan" | "inf" | "-inf"}."""
    if len(d) == 1 and d.get("nonfinite") in ("nan", "inf", "-inf"):
        return float(d["nonfinite"])
    return d


SCENARIO = json.loads(r"""{"name": "fuzz/at_min/064431db27fc", "op": "at_min", "operands": {"a": {"values": [0.0, 4.0], "shape": [1, 2], "dtype": "float32", "views": []}, "v": {"values": [-4.0, -8.0], "shape": [1, 2], "dtype": "float32", "views": []}}, "wrt": ["a", "v"], "lhs_indices": {"values": [0], "shape": [1], "dtype": "uint32", "views": []}, "rhs_indices": null, "sorted_indices": false, "params": {"form": "rows_slice", "updates": "per", "cols": [null, null, null]}, "cotangent": null, "objective": "vjp", "fd_step": null, "family": "scatter_rows_slice", "defect_tags": [], "description": "generated: rows_slice per a(1, 2) v(1, 2), cotangent ones"}""", object_hook=_nonfinite)
# float64 reference values computed when the finding was made
EXPECTED = json.loads(r"""{"forward": [[-4.0, -8.0]], "grad:a": [[0.0, 0.0]], "grad:v": [[1.0, 1.0]]}""", object_hook=_nonfinite)
ATOL, RTOL = 3e-05, 3e-05
EXACT_ZEROS = True   # float32 with small integers on an op whose sums are then exact
HAS_SORTED_FLAG = False


INTEGER_OPERANDS = ()


def axis_positions(spec, n):
    if isinstance(spec, int):
        return [spec % n]
    return list(range(*slice(*spec).indices(n)))


def occurrence_slots(keys):
    first = {}
    return [first.setdefault(k, len(first)) for k in keys], first


def write_list(a_shape, v_shape, lhs, rhs, params):
    """[(target (r, c), flat index into v)] in MLX's occurrence order."""
    R, C = a_shape
    form, mode = params["form"], params.get("updates", "per")
    found = []   # (target, position in the full update array, position in a shared v)
    if form == "slice":
        specs = params["slices"]
        sel = [axis_positions(s, n) for s, n in zip(specs, a_shape)]
        for i, r in enumerate(sel[0]):
            for j, c in enumerate(sel[1]):
                pos = tuple(p for p, s in zip((i, j), specs) if not isinstance(s, int))
                found.append(((r, c), pos, None))
    else:
        li = [int(x) for x in lhs.ravel()]
        ri = None if rhs is None else [int(x) for x in rhs.ravel()]
        slots, _ = occurrence_slots(list(zip(li, ri)) if form == "points" else li)
        for q, ip in enumerate(np.ndindex(*lhs.shape)):
            if form in ("rows", "rows_slice"):
                cols = axis_positions(params["cols"], C) if form == "rows_slice" else range(C)
                found += [((li[q], c), ip + (j,), (slots[q], j)) for j, c in enumerate(cols)]
            elif form == "cols":
                found += [((r, li[q]), (r,) + ip, (r, slots[q])) for r in range(R)]
            else:
                found.append(((li[q], ri[q]), ip, (slots[q],)))
    out = []
    for t, pos, shared in found:
        if mode == "shared":
            src = shared
        elif mode == "broadcast":   # v lines up with the trailing axes; its size-1 axes repeat
            tail = pos[len(pos) - len(v_shape):]
            src = tuple(p if d > 1 else 0 for p, d in zip(tail, v_shape))
        else:
            src = pos
        out.append((t, int(np.ravel_multi_index(src, v_shape))))
    return out


def by_target(inp, lhs, rhs, params):
    groups = {}
    for t, s in write_list(inp["a"].shape, inp["v"].shape, lhs, rhs, params):
        groups.setdefault(t, []).append(s)
    return groups


def mlx_index(mx, x, dim, params):
    i = mx.array(np.asarray(x).astype(np.int32))
    return i - dim if params.get("negative") else i


def mlx_target(mx, ops, lhs, rhs, params):
    """(key, updates) as the scatter sees them."""
    R, C = ops["a"].shape
    form, v = params["form"], ops["v"]
    if form == "slice":
        return tuple(s if isinstance(s, int) else slice(*s) for s in params["slices"]), v
    if params.get("updates") == "shared":
        li = np.array(lhs).ravel().tolist()
        keys = list(zip(li, np.array(rhs).ravel().tolist())) if form == "points" else li
        slots, _ = occurrence_slots(keys)
        width = len(axis_positions(params["cols"], C)) if form == "rows_slice" else C
        shape = {"rows": tuple(lhs.shape) + (width,), "rows_slice": tuple(lhs.shape) + (width,),
                 "cols": (R,) + tuple(lhs.shape), "points": tuple(lhs.shape)}[form]
        v = mx.take(v, mx.array(np.array(slots, dtype=np.int32)), axis=1 if form == "cols" else 0)
        v = v.reshape(shape)
    if form == "rows":
        return mlx_index(mx, lhs, R, params), v
    if form == "rows_slice":
        return (mlx_index(mx, lhs, R, params), slice(*params["cols"])), v
    if form == "cols":
        return (slice(None), mlx_index(mx, lhs, C, params)), v
    return (mlx_index(mx, lhs, R, params), mlx_index(mx, rhs, C, params)), v


PICK = min


def ref_forward(inp, lhs, rhs, params):
    out, vf = inp["a"].copy(), inp["v"].ravel()
    for t, srcs in by_target(inp, lhs, rhs, params).items():
        out[t] = PICK([out[t]] + [vf[s] for s in srcs])
    return out


def ref_vjp(inp, g, lhs, rhs, params):
    """The one winning input at each position takes its cotangent (distinct inputs, no ties)."""
    a, vf = inp["a"], inp["v"].ravel()
    da, dv = g.copy(), np.zeros(vf.size)
    for t, srcs in by_target(inp, lhs, rhs, params).items():
        cands = [("a", a[t])] + [(s, vf[s]) for s in sorted(set(srcs))]
        best = PICK(x for _, x in cands)
        won = [k for k, x in cands if x == best]
        if len(won) != 1:
            da[t] = np.nan
            continue
        if won[0] != "a":
            da[t] = 0.0
            dv[won[0]] += g[t]
    return {"a": da, "v": dv.reshape(inp["v"].shape)}


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    key, v = mlx_target(mx, ops, lhs, rhs, params)
    return ops["a"].at[key].minimum(v)


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
