#!/usr/bin/env python3
"""gather_mm VJP with a broadcast left operand that is a slice of a larger
buffer, right indices only, sorted_indices=True.

Exit 0: defect absent, 1: defect present, 125: cannot test (git bisect skip).
"""
import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line on stderr, exit 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")

TOL = 3e-5
B_VALUES = [3.0, 5.0, 7.0]
RHS = [0, 1, 2]
# The first element is the visible input a; the rest is the buffer tail a
# correct VJP must never read.
BACKINGS = ([2.0, 101.0, 202.0], [2.0, -31.0, 47.0])


def fmt(values):
    return "[" + ", ".join(format(v, ".10g") for v in values) + "]"


def close(got, exp):
    return len(got) == len(exp) and all(
        abs(g - e) <= TOL * (1 + abs(e)) for g, e in zip(got, exp))


def ref_sum_gather_mm(A, B, rhs):
    """float64 sum_q A[i_q] B[j_q] for 1x1 matrices and its gradient wrt B.
    lhs_indices omitted -> arange(len(A)), broadcast against rhs."""
    i = list(range(len(A)))
    i = i * len(rhs) if len(i) == 1 else i
    total, dB = 0.0, [0.0] * len(B)
    for q, jq in enumerate(rhs):
        total += A[i[q]] * B[jq]
        dB[jq] += A[i[q]]
    return total, dB


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

    b = mx.array(B_VALUES).reshape(3, 1, 1)
    ids = mx.array(RHS, dtype=mx.uint32)
    bad = follows_tail = False
    for backing_values in BACKINGS:
        backing = mx.array(backing_values).reshape(3, 1, 1)
        mx.eval(backing)  # materialise the buffer so the slice is a view into it
        a = backing[:1]
        visible = a.reshape(-1).tolist()
        print(f"inputs: backing={fmt(backing_values)} shape (3,1,1); a=backing[:1]={fmt(visible)}; "
              f"B={fmt(B_VALUES)} shape (3,1,1); rhs_indices={RHS} uint32; lhs_indices omitted")
        e_sum, e_grad = ref_sum_gather_mm(backing_values[:1], B_VALUES, RHS)
        print(f"  expected (float64): forward={e_sum:.10g} grad_B={fmt(e_grad)}")
        for srt in (False, True):
            f = lambda b: mx.gather_mm(a, b, rhs_indices=ids, sorted_indices=srt).sum()
            try:
                total, g = mx.value_and_grad(f)(b)
                total, g = total.item(), g.reshape(-1).tolist()
            except Exception as e:
                print(f"  sorted_indices={srt}: exception: {type(e).__name__}: {e}".replace("\n", " "))
                if not srt:
                    print("VERDICT: cannot test (unsorted control raised)")
                    return 125
                bad = True
                continue
            ok = close([total], [e_sum]) and close(g, e_grad)
            bad |= srt and not ok
            tail = srt and not ok and close(g, backing_values)
            follows_tail |= tail
            note = "; equals the backing buffer" if tail else ""
            print(f"  sorted_indices={srt}: forward={total:.10g} grad_B={fmt(g)} -> "
                  + ("agrees" if ok else "DISAGREES") + note)

    if bad:
        why = ("gradient follows the backing tail beyond the slice a" if follows_tail
               else "gradient disagrees with the float64 reference")
        print(f"VERDICT: defect present (sorted_indices=True {why})")
        return 1
    print("VERDICT: defect absent")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a probe bug must not read as "defect present"
        print(f"VERDICT: cannot test (probe error: {type(e).__name__}: {e})".replace("\n", " "))
        sys.exit(125)
