#!/usr/bin/env python3
"""mlx-vjpcheck fuzz finding block_masked_mm__forward__reference__wrong-value__block_masked

block_masked_mm: forward flagged by the reference oracle (wrong-value); call form block_masked.
All oracles that flagged it: finite_differences, reference. Minimal counterexample: 233 operand elements.

Exit 0: defect absent, 1: defect present, 125: cannot test (git bisect skip).
Standalone: mlx + numpy + the standard library.
"""
import argparse
import json
import subprocess
import sys

import numpy as np



def _nonfinite(d):
    """Strict JSON carries NaN and infinities as {"nonfinite": "nan" | "inf" | "-inf"}."""
    if len(d) == 1 and d.get("nonfinite") in ("nan", "inf", "-inf"):
        return float(d["nonfinite"])
    return d


SCENARIO = json.loads(r"""{"name": "fuzz/block_masked_mm/74ee0b555740", "op": "block_masked_mm", "operands": {"a": {"values": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], "shape": [2, 1, 3, 3], "dtype": "float32", "views": []}, "b": {"values": [3.0, 0.0, 4.0, 0.0, -4.0, 0.0, 3.0, 0.0, 1.0, 3.0, 0.0, 0.0, 2.0, 3.0, 2.0, -4.0, 0.0, 4.0, 2.0, 3.0, 3.0, -3.0, 4.0, 0.0, -4.0, -3.0, -1.0, 4.0, -1.0, 2.0, 1.0, -3.0, 2.0, -1.0, 3.0, -4.0, 4.0, -4.0, -2.0, 0.0, -2.0, 4.0, 1.0, 1.0, 2.0, 0.0, 1.0, 2.0, 1.0, -3.0, 1.0, -1.0, 3.0, 3.0, 4.0, 4.0, -4.0, 0.0, 0.0, -2.0, 4.0, 4.0, -2.0, -3.0, -3.0, 4.0, 2.0, 3.0, -2.0, 0.0, 1.0, -4.0, -2.0, -4.0, -1.0, -2.0, -4.0, -3.0, -1.0, 1.0, 0.0, 4.0, 1.0, 4.0, 2.0, -1.0, 3.0, 2.0, -2.0, -1.0, -3.0, 2.0, 0.0, -4.0, -4.0, 1.0, -2.0, 4.0, 3.0, -2.0, -1.0, 2.0, -1.0, -1.0, -2.0, -4.0, -2.0, 2.0, -3.0, 2.0, 2.0, 4.0, 1.0, -2.0, 1.0, 3.0, 2.0, 2.0, 1.0, 0.0, 1.0, -1.0, -1.0, 2.0, 3.0, 1.0, -3.0, 1.0, -1.0, 2.0, 4.0, -1.0, -1.0, 4.0, 4.0, 2.0, 3.0, 1.0, 3.0, 4.0, -3.0, -3.0, -2.0, -3.0, -4.0, -3.0, -3.0, -4.0, 1.0, -1.0, 3.0, -1.0, -1.0, 0.0, -4.0, 2.0, -1.0, -2.0, -1.0, -4.0, -1.0, -3.0, -4.0, -4.0, 4.0, -1.0, -4.0, 4.0, 3.0, 3.0, -2.0, 0.0, 3.0, 2.0, 3.0, 4.0, 4.0, 3.0, 4.0, 3.0, -3.0, -1.0, 2.0, -2.0, -4.0, 2.0, 0.0, -1.0, 1.0, 0.0, 0.0, 4.0, -4.0, -4.0, -2.0, -3.0, -3.0, 1.0, -1.0, 4.0, 0.0], "shape": [1, 1, 3, 67], "dtype": "float32", "views": []}, "mask_out": {"values": [1, 1, 1, 1, 1, 1], "shape": [2, 1, 1, 3], "dtype": "uint32", "views": []}, "mask_lhs": {"values": [1, 1], "shape": [2, 1, 1, 1], "dtype": "uint32", "views": []}, "mask_rhs": {"values": [0, 0, 0, 0, 1, 1], "shape": [2, 1, 1, 3], "dtype": "uint32", "views": []}}, "wrt": ["a", "b"], "lhs_indices": null, "rhs_indices": null, "sorted_indices": false, "params": {"block_size": 32, "masks": ["mask_rhs"]}, "cotangent": null, "objective": "vjp", "fd_step": null, "family": "block_masked", "defect_tags": [], "description": "generated: M K N 3 3 67, block 32, masks absent/absent/random, cotangent ones"}""", object_hook=_nonfinite)
# float64 reference values computed when the finding was made
EXPECTED = json.loads(r"""{"forward": [[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]], [[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -4.0, 2.0, 8.0, -2.0, 1.0, -6.0, -3.0, 0.0, 3.0, 5.0, 7.0, 6.0, 10.0, 4.0, -4.0, 2.0, 6.0, -3.0, -1.0, 2.0, 3.0, 3.0, 4.0, 3.0, -2.0, 7.0, -3.0, -9.0, 3.0, 0.0, -3.0, 2.0, -5.0, 7.0, 6.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -4.0, 2.0, 8.0, -2.0, 1.0, -6.0, -3.0, 0.0, 3.0, 5.0, 7.0, 6.0, 10.0, 4.0, -4.0, 2.0, 6.0, -3.0, -1.0, 2.0, 3.0, 3.0, 4.0, 3.0, -2.0, 7.0, -3.0, -9.0, 3.0, 0.0, -3.0, 2.0, -5.0, 7.0, 6.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -4.0, 2.0, 8.0, -2.0, 1.0, -6.0, -3.0, 0.0, 3.0, 5.0, 7.0, 6.0, 10.0, 4.0, -4.0, 2.0, 6.0, -3.0, -1.0, 2.0, 3.0, 3.0, 4.0, 3.0, -2.0, 7.0, -3.0, -9.0, 3.0, 0.0, -3.0, 2.0, -5.0, 7.0, 6.0]]]], "grad:a": [[[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[19.0, 14.0, 16.0], [19.0, 14.0, 16.0], [19.0, 14.0, 16.0]]]], "grad:b": [[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]]]]}""", object_hook=_nonfinite)
ATOL, RTOL = 3e-05, 3e-05
EXACT_ZEROS = True   # float32 with small integers on an op whose sums are then exact
HAS_SORTED_FLAG = False


INTEGER_OPERANDS = ("mask_out", "mask_lhs", "mask_rhs")


def tile_mask(inp, params, name, rows, cols, new_axes):
    # Element mask of `name` (ones when absent): each tile entry repeated bs x bs times.
    if name not in params["masks"]:
        return np.ones((rows, cols))
    m = inp[name].astype(np.float64)
    for ax in new_axes:
        m = np.expand_dims(m, ax)
    bs = params["block_size"]
    return np.repeat(np.repeat(m, bs, axis=-2), bs, axis=-1)[..., :rows, :cols]


def matrices(inp, params):
    # a as (..., M, K) and b as (..., K, N) (a vector a is one row, a vector b one column),
    # and the three element masks.
    a, b = inp["a"], inp["b"]
    A = a.reshape(1, -1) if a.ndim == 1 else a
    B = b.reshape(-1, 1) if b.ndim == 1 else b
    M, K, N = A.shape[-2], A.shape[-1], B.shape[-1]
    out_axes = ([-2] if a.ndim == 1 else []) + ([-1] if b.ndim == 1 else [])
    lo = tile_mask(inp, params, "mask_out", M, N, out_axes)
    ll = tile_mask(inp, params, "mask_lhs", M, K, [-2] if a.ndim == 1 else [])
    lr = tile_mask(inp, params, "mask_rhs", K, N, [-1] if b.ndim == 1 else [])
    return A, B, lo, ll, lr


def drop_vector_axes(y, inp):
    if inp["b"].ndim == 1:
        y = y[..., 0]
    if inp["a"].ndim == 1:
        y = y[..., 0, :] if inp["b"].ndim > 1 else y[..., 0]
    return y


def ref_forward(inp, lhs, rhs, params):
    A, B, lo, ll, lr = matrices(inp, params)
    return drop_vector_axes(np.einsum("...mk,...kn->...mn", A * ll, B * lr) * lo, inp)


def summed_to(d, shape):
    # Undo broadcasting: sum leading extra axes, then axes stretched from 1.
    while d.ndim > len(shape):
        d = d.sum(axis=0)
    for ax, n in enumerate(shape):
        if n == 1 and d.shape[ax] != 1:
            d = d.sum(axis=ax, keepdims=True)
    return d


def ref_vjp(inp, g, lhs, rhs, params):
    A, B, lo, ll, lr = matrices(inp, params)
    G = g[..., None] if inp["b"].ndim == 1 else g
    G = G[..., None, :] if inp["a"].ndim == 1 else G
    dC = G * lo
    dA = np.einsum("...mn,...kn->...mk", dC, B * lr) * ll
    dB = np.einsum("...mk,...mn->...kn", A * ll, dC) * lr
    return {"a": summed_to(dA, A.shape).reshape(inp["a"].shape),
            "b": summed_to(dB, B.shape).reshape(inp["b"].shape)}


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    masks = {n: (mx.array(ops[n] != 0) if n in params["masks"] else None)
             for n in ("mask_out", "mask_lhs", "mask_rhs")}
    return mx.block_masked_mm(ops["a"], ops["b"], block_size=params["block_size"], **masks)


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
    ap = argparse.ArgumentParser(description=__doc__)
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
