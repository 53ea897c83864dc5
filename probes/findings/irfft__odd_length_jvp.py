#!/usr/bin/env python3
"""irfft / odd_length_jvp: irfft with an odd output length: the forward-mode tangent is one element short (the VJP is right)
Minimal input: irfft/n_odd; jvp:forward: MLX [[1.5, 0.0, -0.5, 0.0], [0.5, 1.5, -0.5, 1.5]] vs float64 rule [[1.3999999999999975, 0.12360679774997685, -0.32360679774.... MLX releases: 0.31.2 – 0.32.4 (older: cannot test).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.fft.irfft(a, n=5, axis=-1, norm="backward")


a = mx.array(np.array([3.0, 2.0, 4.0, -4.0, 2.0, 4.0, 4.0, 0.0], dtype=np.float32).reshape((2, 4)), dtype=mx.float32)
g = mx.array(np.array([4.0, -1.0, 4.0, 2.0, 3.0, -4.0, 2.0, 0.0, -3.0, 1.0]).reshape((2, 5)), dtype=mx.float32)
# the float64 rule: linear: d a = the adjoint of the transform applied to g (MLX's packing dL/dRe + i dL/dIm; a real operand takes the real part)
# forward mode: mx.jvp along u gives J u
want = {"jvp:forward": np.array([1.3999999999999975, 0.12360679774997685, -0.32360679774997764, -0.32360679774997764, 0.12360679774997685, -0.20000000000000404, 1.6944271909999231, -0.09442719099991297, -0.09442719099991297, 1.6944271909999231]).reshape((2, 5))}
try:
    mx.eval(f(a))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
u = [mx.array(np.array([1.0, 2.0, 1.0, 3.0, 3.0, 1.0, -3.0, -2.0]).reshape((2, 4)), dtype=mx.float32)]
try:
    (y,), (ju,) = mx.jvp(f, [a], u)
    mx.eval(got := {"jvp:forward": ju})
except Exception as e:
    sys.exit(print("cannot test: MLX has no JVP here:", e) or 125)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))
