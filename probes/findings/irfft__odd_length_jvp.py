#!/usr/bin/env python3
"""irfft: the forward-mode tangent (mx.jvp) of an irfft with an odd output length n is one element short
FFT::jvp calls irfftn without the output length, which defaults to 2 (m - 1), always even; the VJP is right.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.fft.irfft(a, n=5)


a = mx.array([1.0, 2.0, 3.0])
u = mx.array([1.0, 0.0, 0.0])
# the float64 rule: irfft is linear, so its tangent along u is irfft(u, n=5) = np.fft.irfft([1, 0, 0], n=5)
want = np.array([0.2, 0.2, 0.2, 0.2, 0.2])
try:
    mx.eval(f(a))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    _, (t,) = mx.jvp(f, [a], [u])
    mx.eval(t)
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the JVP raised {type(e).__name__}: {e})") or 1)
have = np.array(t, dtype=np.float64)
bad = not (have.shape == want.shape and np.allclose(have, want, rtol=3e-05, atol=3e-05))
print(f"tangent: MLX shape {have.shape} {have.tolist()}, float64 rule shape {want.shape} {want.tolist()}")
sys.exit(print("VERDICT: defect " + ("present (the tangent differs)" if bad else "absent")) or (1 if bad else 0))
