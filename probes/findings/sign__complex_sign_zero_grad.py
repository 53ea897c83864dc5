#!/usr/bin/env python3
"""sign / complex_sign_zero_grad: sign of a complex z is z/|z|, yet Sign::vjp returns zeros for every dtype
Minimal input: unary/sign/complex64/reversed; grad:a: MLX [[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[0.0,... vs float64 rule [[[-0.29517787457834516, -0.48704349305426936], [-0.58851.... MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.sign(a)


a = mx.array(np.array([complex(50.0, 0.0), complex(2.0625, 0.9375), complex(50.0, 0.0), complex(-2.0625, -2.0), complex(50.0, 0.0), complex(-0.25, 1.5625), complex(50.0, 0.0), complex(0.5, -1.625), complex(50.0, 0.0), complex(0.5, 2.4375), complex(50.0, 0.0), complex(-1.75, -2.0), complex(50.0, 0.0), complex(-0.75, -2.25), complex(50.0, 0.0), complex(-1.0, 0.8125), complex(50.0, 0.0), complex(-1.1875, -0.9375), complex(50.0, 0.0), complex(-2.125, -2.0625), complex(50.0, 0.0), complex(-0.8125, -2.8125), complex(50.0, 0.0), complex(2.0625, -1.25)], dtype=np.complex64).reshape((3, 8)), dtype=mx.complex64)
mx.eval(a)
a = a[None:None:-1, None:None:-2]
g = mx.array(np.array([complex(-1.0, -1.0), complex(-1.0, 3.0), complex(-3.0, -3.0), complex(-2.0, 1.0), complex(-2.0, -3.0), complex(2.0, 2.0), complex(1.0, 1.0), complex(-3.0, 2.0), complex(1.0, 3.0), complex(-1.0, 1.0), complex(-1.0, -1.0), complex(2.0, 2.0)]).reshape((3, 4)), dtype=mx.complex64)
# the float64 rule: d sign x = 0 for real x (0 included); complex z: sign z = z/|z|, gradient (g - Re(conj(g) s) s) / |z|
want = {"forward": np.array([complex(0.8551978315540179, -0.5183017160933442), complex(-0.2775396528207745, -0.9607141828411423), complex(-0.7175806916283163, -0.6964753771686599), complex(-0.7848827655334261, -0.6196442885790207), complex(-0.7761140001162655, 0.6305926250944658), complex(-0.31622776601683794, -0.9486832980505138), complex(-0.658504607868518, -0.7525766947068778), complex(0.2009441437213313, 0.97960270064149), complex(0.2940858488375231, -0.95577900872195), complex(-0.15799050110667284, 0.9874406319167053), complex(-0.7179003934510548, -0.6961458360737501), complex(0.9103664774626049, 0.41380294430118403)]).reshape((3, 4)), "grad:a": np.array([complex(-0.29517787457834516, -0.48704349305426936), complex(-0.5885140664259322, 0.1700151747452696), complex(0.014891233008505665, -0.015342482493612166), complex(-0.8290121540033315, 1.0500820617375528), complex(-1.7567568661455235, -2.1621622967944902), complex(0.5059644256269407, -0.16865480854231352), complex(0.026639882998473592, -0.02330989762366431), complex(-1.3152016069180383, 0.26978494500882855), complex(1.0332746040237297, 0.317930647391917), complex(-0.5175975855288814, -0.08281561368462101), complex(0.005271336193648774, -0.005436065449700407), complex(-0.18139307147449196, 0.3990647572438814)]).reshape((3, 4))}
try:
    mx.eval(f(a))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [a], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.complex64 if x.dtype == mx.complex64 else mx.float32)) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))
