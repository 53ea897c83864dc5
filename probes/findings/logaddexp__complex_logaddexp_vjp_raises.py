#!/usr/bin/env python3
"""logaddexp / complex_logaddexp_vjp_raises: logaddexp of complex inputs: the forward works, the VJP raises (it needs a complex sigmoid)
Minimal input: binary/logaddexp/complex64/reversed; the VJP raises: ValueError: [sigmoid] Not supported for complex64.. MLX releases: 0.32.1 – 0.32.4 (≤ 0.25.2 – 0.32.0: no raise, but wrong gradients).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, b):
    return mx.logaddexp(a, b)


a = mx.array(np.array([complex(50.0, 0.0), complex(0.25, -0.4375), complex(50.0, 0.0), complex(-0.5625, 0.625), complex(50.0, 0.0), complex(-0.375, 0.25), complex(50.0, 0.0), complex(-0.375, 0.6875), complex(50.0, 0.0), complex(0.375, -0.25), complex(50.0, 0.0), complex(-0.4375, -0.25), complex(50.0, 0.0), complex(-0.75, -0.4375), complex(50.0, 0.0), complex(-0.75, -0.5625), complex(50.0, 0.0), complex(0.75, -0.25), complex(50.0, 0.0), complex(-0.625, 0.5625), complex(50.0, 0.0), complex(0.3125, 0.75), complex(50.0, 0.0), complex(-0.375, 0.25)], dtype=np.complex64).reshape((3, 8)), dtype=mx.complex64)
mx.eval(a)
a = a[None:None:-1, None:None:-2]
b = mx.array(np.array([complex(0.6875, -0.625), complex(-0.6875, -0.25), complex(0.5625, 0.625), complex(-0.375, 0.6875), complex(-0.6875, -0.625), complex(-0.5, -0.75), complex(0.625, -0.75), complex(-0.5625, 0.4375), complex(-0.6875, 0.5), complex(0.375, 0.4375), complex(0.5625, 0.625), complex(-0.5, -0.6875)], dtype=np.complex64).reshape((4, 3)), dtype=mx.complex64)
mx.eval(b)
b = mx.transpose(b, (1, 0))
g = mx.array(np.array([complex(1.0, 1.0), complex(-3.0, -3.0), complex(-2.0, 2.0), complex(-3.0, 3.0), complex(3.0, 1.0), complex(3.0, 2.0), complex(1.0, -3.0), complex(3.0, -3.0), complex(-1.0, -1.0), complex(3.0, -3.0), complex(-1.0, 2.0), complex(-2.0, 3.0)]).reshape((3, 4)), dtype=mx.complex64)
# the float64 rule: d log(e^a + e^b) = (g conj(s), g conj(1 - s)), s = sigmoid(a - b)
want = {"forward": np.array([complex(0.9106365565424029, -0.41116793964269494), complex(0.7194161572363591, 0.7290911578811805), complex(0.7278770120996395, -0.497402047988045), complex(1.2150354534685228, 0.027504879613679086), complex(-0.03735953557929558, -0.40132870077049637), complex(-0.02951128734318563, -0.53418733629901), complex(0.13506496415330524, 0.07141019397240846), complex(1.0683185280490075, 0.23119384671543844), complex(0.8925632260969153, 0.6425842521805883), complex(0.12759584564429724, -0.21591369073746255), complex(0.06815226679783534, 0.5664062394036824), complex(0.630050875018648, -0.5175009498654198)]).reshape((3, 4)), "grad:a": np.array([complex(0.3879807821655, 0.048448433482280534), complex(-2.0384174826409542, -1.9549094701658407), complex(0.19818852904083178, 0.7037618027636705), complex(-2.328474886735779, 1.2960200336688354), complex(1.3732902208155622, 0.7200576634919983), complex(1.5466594368211717, 0.8275846728337373), complex(1.0697746124697423, -1.4273780229255646), complex(2.023574405058837, -0.6352989563966647), complex(-0.29387314325360486, -0.2685925721878543), complex(0.8061168667486581, -2.4367429344194997), complex(-0.46899439252306035, 1.0938306164723364), complex(-1.199333649459046, 2.1542153499317367)]).reshape((3, 4)), "grad:b": np.array([complex(0.6120192178345, 0.9515515665177195), complex(-0.9615825173590459, -1.0450905298341593), complex(-2.1981885290408316, 1.2962381972363295), complex(-0.6715251132642213, 1.7039799663311646), complex(1.6267097791844378, 0.2799423365080017), complex(1.4533405631788283, 1.1724153271662627), complex(-0.06977461246974237, -1.5726219770744354), complex(0.9764255949411631, -2.3647010436033358), complex(-0.7061268567463952, -0.7314074278121456), complex(2.193883133251342, -0.5632570655805003), complex(-0.5310056074769396, 0.9061693835276636), complex(-0.8006663505409539, 0.8457846500682633)]).reshape((3, 4))}
try:
    mx.eval(f(a, b))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [a, b], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.complex64 if x.dtype == mx.complex64 else mx.float32)) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))
