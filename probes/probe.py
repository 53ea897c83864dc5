#!/usr/bin/env python3
"""gather_mm VJP with repeated left indices and sorted_indices=True.

Exit 0: defect absent, 1: defect present, 125: cannot test (git bisect skip).
"""
import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line on stderr, exit 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")

TOL = 3e-5


def fmt(values):
    return "[" + ", ".join(format(v, ".10g") for v in values) + "]"


def close(got, exp):
    return len(got) == len(exp) and all(
        abs(g - e) <= TOL * (1 + abs(e)) for g, e in zip(got, exp))


def ref_gather_mm(A, B, lhs=None, rhs=None, G=None):
    """float64 gather_mm of 1x1 matrices and its VJP, by the scalar rule
    dA[l] = sum_{q: i_q=l} G_q B[j_q],  dB[l] = sum_{q: j_q=l} A[i_q] G_q."""
    i = list(lhs) if lhs is not None else list(range(len(A)))
    j = list(rhs) if rhs is not None else list(range(len(B)))
    n = max(len(i), len(j))
    i, j = (i * n if len(i) == 1 else i), (j * n if len(j) == 1 else j)
    G = G if G is not None else [1.0] * n
    Y = [float(A[i[q]]) * B[j[q]] for q in range(n)]
    dA, dB = [0.0] * len(A), [0.0] * len(B)
    for q in range(n):
        dA[i[q]] += G[q] * B[j[q]]
        dB[j[q]] += A[i[q]] * G[q]
    return Y, dA, dB


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

    A, B, lhs = [2.0, 7.0], [3.0, 5.0], [0, 0]
    print(f"inputs: A={fmt(A)} shape (2,1,1); B={fmt(B)} shape (2,1,1); "
          f"lhs_indices={lhs} uint32; rhs_indices omitted (defaults to [0, 1]); "
          "cotangent ones (2,1,1)")
    eY, edA, edB = ref_gather_mm(A, B, lhs=lhs)
    print(f"expected (float64): Y={fmt(eY)} dA={fmt(edA)} dB={fmt(edB)}")

    a = mx.array(A).reshape(2, 1, 1)
    b = mx.array(B).reshape(2, 1, 1)
    ids = mx.array(lhs, dtype=mx.uint32)
    ok = {}
    for srt in (False, True):
        f = lambda a, b: mx.gather_mm(a, b, lhs_indices=ids, sorted_indices=srt)
        try:
            (y,), (da, db) = mx.vjp(f, [a, b], [mx.ones((2, 1, 1))])
            Y, dA, dB = (t.reshape(-1).tolist() for t in (y, da, db))
        except Exception as e:  # MLX errors surface as RuntimeError/ValueError
            print(f"sorted_indices={srt}: exception: {type(e).__name__}: {e}".replace("\n", " "))
            if not srt:
                print("VERDICT: cannot test (unsorted control raised)")
                return 125
            ok[srt] = False
            continue
        ok[srt] = close(Y, eY) and close(dA, edA) and close(dB, edB)
        print(f"sorted_indices={srt}: Y={fmt(Y)} dA={fmt(dA)} dB={fmt(dB)} -> "
              + ("agrees" if ok[srt] else "DISAGREES"))

    control = "unsorted agrees" if ok[False] else "unsorted also disagrees"
    if ok[True]:
        print(f"VERDICT: defect absent (sorted VJP agrees; {control})")
        return 0
    print(f"VERDICT: defect present (sorted_indices=True gives a wrong VJP; {control})")
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a probe bug must not read as "defect present"
        print(f"VERDICT: cannot test (probe error: {type(e).__name__}: {e})".replace("\n", " "))
        sys.exit(125)
