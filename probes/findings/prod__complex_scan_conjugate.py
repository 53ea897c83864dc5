#!/usr/bin/env python3
"""prod of complex values: its VJP is right, the VJP of that VJP (second order) is not
prod's VJP multiplies g by conj(cumprod(...)), and Scan::vjp for cumprod takes no conjugate for complex
inputs (mx.cumprod's own first-order VJP is wrong for complex inputs: the root cause).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

x = mx.array([1 + 2j, 2 - 1j, 3 + 1j], dtype=mx.complex64)
g = mx.array(1.5 - 0.5j, dtype=mx.complex64)
u = mx.array([1 - 1j, 2 + 0j, -1 + 1j], dtype=mx.complex64)


def h(a):
    """Re <u, the VJP of prod at a for cotangent g> (MLX's convention: d Re / d Re a + i d Re / d Im a)."""
    _, (d,) = mx.vjp(lambda z: mx.prod(z), [a], [g])
    return mx.sum(mx.real(mx.conj(u) * d))


# the float64 rule: h = Re sum_i conj(u_i) g conj(P_i), P_i the product of the others, so
# grad_k = sum_{i != k} conj(u_i) g conj(prod of x_j, j not i or k)
want = np.array([5 - 10j, 3 + 4j, 4 - 3j])
try:
    mx.eval(h(x))
except Exception as e:
    sys.exit(print("cannot test: the first-order VJP raised", e) or 125)
try:
    got = mx.grad(h)(x)
    mx.eval(got)
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the second-order VJP raised {type(e).__name__}: {e})") or 1)
have = np.array(got).astype(np.complex128)
bad = not np.allclose(have, want, rtol=3e-05, atol=3e-05)
print(f"second order: MLX {have.tolist()}, float64 rule {want.tolist()}")
sys.exit(print("VERDICT: defect " + ("present (second order differs)" if bad else "absent")) or (1 if bad else 0))
