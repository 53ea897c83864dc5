#!/usr/bin/env python3
"""irfft / jvp_odd_n_shape: the JVP of mx.fft.irfft with an odd output length n has n - 1 elements: FFT::jvp calls fft::irfftn on the tangent without the primitive's output size, so it takes the default 2 (m - 1), right only for even n (the forward and the VJP keep n)
Minimal input: irfft(z, n=9) at z complex (5,), tangent ones: forward (9,), JVP (8,). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

z = np.arange(5.0) + 1j * np.arange(5.0)
t = np.ones(5) + 0.5j
try:
    _, (got,) = mx.jvp(lambda z: mx.fft.irfft(z, n=9), [mx.array(z.astype(np.complex64))],
                       [mx.array(t.astype(np.complex64))])
    mx.eval(got)
except Exception as e:
    sys.exit(print("cannot test: jvp raised", e) or 125)
have, want = np.array(got, dtype=np.float64), np.fft.irfft(t, n=9)   # irfft is linear: J t = irfft(t, n)
ok = have.shape == want.shape and np.allclose(have, want, atol=1e-5)
print(f"jvp: MLX shape {have.shape} {np.round(have, 5).tolist()}, rule shape {want.shape} {np.round(want, 5).tolist()}",
      "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + ("absent" if ok else "present (the JVP differs)")) or (0 if ok else 1))
