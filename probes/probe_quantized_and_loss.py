#!/usr/bin/env python3
"""(a) gather_qmm VJP and (b) a gradient step, with repeated left indices
and sorted_indices=True.

Exit 0: defect absent, 1: defect present, 125: cannot test (git bisect skip).
"""
import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line on stderr, exit 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")

TOL = 3e-5
K = N = GROUP = 32
E = 2
X_ROWS = [2.0, 7.0]        # x[r, 0, k] = X_ROWS[r] for every k
BIASES = [2.0, 4.0]        # per expert; scales and codes are all 1
LHS = [0, 0]               # rhs_indices omitted -> defaults to [0, 1]
ONES_WORD = {4: 0x11111111, 8: 0x01010101}   # every packed code == 1


class ControlFailed(Exception):
    pass


def fmt(values):
    return "[" + ", ".join(v if isinstance(v, str) else format(v, ".10g")
                           for v in values) + "]"


def close(got, exp):
    return len(got) == len(exp) and all(
        abs(g - e) <= TOL * (1 + abs(e)) for g, e in zip(got, exp))


def flatten(t):
    return [v for item in t for v in flatten(item)] if isinstance(t, list) else [t]


def per_row(flat, rows):
    """One number per row when the row is constant (the case here)."""
    n = len(flat) // rows
    out = []
    for r in range(rows):
        chunk = flat[r * n:(r + 1) * n]
        out.append(chunk[0] if min(chunk) == max(chunk) else f"{min(chunk):g}..{max(chunk):g}")
    return out


def ref_qmm():
    """float64 y = x[i_q] W[j_q]^T with W = code*scale + bias, and its VJP
    with respect to x, scales and biases (codes held fixed)."""
    code = [[[1.0] * K for _ in range(N)] for _ in range(E)]
    scale = [[[1.0] * (K // GROUP) for _ in range(N)] for _ in range(E)]
    bias = [[[BIASES[e]] * (K // GROUP) for _ in range(N)] for e in range(E)]
    W = [[[code[e][n][k] * scale[e][n][k // GROUP] + bias[e][n][k // GROUP]
           for k in range(K)] for n in range(N)] for e in range(E)]
    x = [[X_ROWS[r]] * K for r in range(len(X_ROWS))]
    i, j = LHS, list(range(E))
    G = [[1.0] * N for _ in i]
    y = [[sum(x[i[q]][k] * W[j[q]][n][k] for k in range(K)) for n in range(N)]
         for q in range(len(i))]
    dx = [[0.0] * K for _ in x]
    dW = [[[0.0] * K for _ in range(N)] for _ in range(E)]
    for q in range(len(i)):
        for n in range(N):
            for k in range(K):
                dx[i[q]][k] += G[q][n] * W[j[q]][n][k]
                dW[j[q]][n][k] += G[q][n] * x[i[q]][k]
    ds = [[[0.0] * (K // GROUP) for _ in range(N)] for _ in range(E)]
    db = [[[0.0] * (K // GROUP) for _ in range(N)] for _ in range(E)]
    for e in range(E):
        for n in range(N):
            for k in range(K):
                ds[e][n][k // GROUP] += dW[e][n][k] * code[e][n][k]
                db[e][n][k // GROUP] += dW[e][n][k]
    return flatten(y), flatten(dx), flatten(ds), flatten(db)


def run_guarded(label, srt, fn):
    """Exceptions: unsorted control -> cannot test; sorted run -> defect."""
    try:
        return fn()
    except Exception as e:
        print(f"{label} sorted_indices={srt}: exception: {type(e).__name__}: {e}".replace("\n", " "))
        if not srt:
            raise ControlFailed(label)
        return None


def part_a(mx):
    print("(a) gather_qmm affine, transpose=True, K=N=32, group_size=32, 2 experts, "
          f"codes all 1, scales 1, biases {fmt(BIASES)}; x rows {fmt(X_ROWS)} "
          f"shape (2,1,32); lhs_indices={LHS} uint32; cotangent ones (2,1,32)")
    ey, edx, eds, edb = ref_qmm()
    print(f"  expected (float64), one value per row/expert: y={fmt(per_row(ey, 2))} "
          f"dx={fmt(per_row(edx, 2))} dscales={fmt(per_row(eds, E))} dbiases={fmt(per_row(edb, E))}")
    x = mx.array([[[v] * K] for v in X_ROWS])
    scales = mx.ones((E, N, K // GROUP))
    biases = mx.array([[[b] * (K // GROUP)] * N for b in BIASES])
    ids = mx.array(LHS, dtype=mx.uint32)
    bad = False
    for bits in (4, 8):
        wq = mx.full((E, N, K * bits // 32), ONES_WORD[bits], dtype=mx.uint32)
        for srt in (False, True):
            def f(x, s, b):
                return mx.gather_qmm(x, wq, s, b, lhs_indices=ids, transpose=True,
                                     group_size=GROUP, bits=bits, sorted_indices=srt)

            def measure():
                (y,), grads = mx.vjp(f, [x, scales, biases], [mx.ones((2, 1, N))])
                return [t.reshape(-1).tolist() for t in (y, *grads)]
            res = run_guarded(f"  bits={bits}", srt, measure)
            if res is None:
                bad |= srt
                continue
            y, dx, ds, db = res
            ok = close(y, ey) and close(dx, edx) and close(ds, eds) and close(db, edb)
            bad |= srt and not ok
            print(f"  bits={bits} sorted_indices={srt}: y={fmt(per_row(y, 2))} dx={fmt(per_row(dx, 2))} "
                  f"dscales={fmt(per_row(ds, E))} dbiases={fmt(per_row(db, E))} -> "
                  + ("agrees" if ok else "DISAGREES"))
    return bad


def part_b(mx):
    A, B, lhs, lr = [2.0, 7.0], [3.0, 5.0], [0, 0], 1 / 32
    print(f"(b) loss L(A) = 0.5*(Y0-Y1)^2 with Y = gather_mm(A, B, lhs_indices={lhs}, "
          f"sorted_indices=True); A={fmt(A)}, B={fmt(B)} fixed, lr={lr}")
    # float64: Y_q = A[i_q] B[j_q], dL/dY = (Y0-Y1)*[1,-1], dA by the scatter-add rule.
    j = [0, 1]
    Y = [A[lhs[q]] * B[j[q]] for q in range(2)]
    G = [Y[0] - Y[1], Y[1] - Y[0]]
    true_g = [0.0, 0.0]
    for q in range(2):
        true_g[lhs[q]] += G[q] * B[j[q]]
    print(f"  expected (float64): L={0.5 * (Y[0] - Y[1]) ** 2:.10g} gradient={fmt(true_g)}")

    b = mx.array(B).reshape(2, 1, 1)
    ids = mx.array(lhs, dtype=mx.uint32)

    def loss(a, srt=True):
        y = mx.gather_mm(a, b, lhs_indices=ids, sorted_indices=srt).reshape(-1)
        return 0.5 * (y[0] - y[1]) ** 2

    a0 = mx.array(A).reshape(2, 1, 1)
    grads = {}
    for srt in (False, True):
        g = run_guarded("  loss gradient", srt,
                        lambda: mx.grad(lambda a: loss(a, srt))(a0).reshape(-1).tolist())
        if g is not None:
            grads[srt] = g
            print(f"  MLX gradient sorted_indices={srt}: {fmt(g)} -> "
                  + ("agrees" if close(g, true_g) else "DISAGREES"))
    if True not in grads:
        return True
    L0 = loss(a0).item()
    print(f"  MLX forward loss at A: {L0:.10g}")
    for name, g in (("sorted-gradient step", grads[True]), ("true-gradient step", true_g)):
        new_a = [p - lr * d for p, d in zip(A, g)]
        L1 = loss(mx.array(new_a).reshape(2, 1, 1)).item()
        trend = "increases" if L1 > L0 else "decreases" if L1 < L0 else "keeps"
        print(f"  {name}: A={fmt(new_a)} MLX loss={L1:.10g} ({trend} the loss)")
    return not close(grads[True], true_g)


def main():
    ap = OneLineParser(description=__doc__)
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    args = ap.parse_args()
    try:
        import mlx.core as mx
    except ImportError:
        print("cannot test: mlx is not installed")
        return 125
    if args.device == "gpu" and not mx.is_available(mx.gpu):
        print("cannot test: no GPU backend (Metal/CUDA) is available in this MLX build")
        return 125
    mx.set_default_device(mx.gpu if args.device == "gpu" else mx.cpu)
    print(f"mlx {mx.__version__}, device {args.device}")
    try:
        bad_a = part_a(mx)
        bad_b = part_b(mx)
    except ControlFailed as e:
        print(f"VERDICT: cannot test (unsorted control raised in {str(e).strip()})")
        return 125
    if bad_a or bad_b:
        parts = " and ".join(p for p, bad in (("(a) gather_qmm VJP", bad_a),
                                             ("(b) loss gradient", bad_b)) if bad)
        print(f"VERDICT: defect present (sorted_indices=True disagrees in {parts})")
        return 1
    print("VERDICT: defect absent")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a probe bug must not read as "defect present"
        print(f"VERDICT: cannot test (probe error: {type(e).__name__}: {e})".replace("\n", " "))
        sys.exit(125)
