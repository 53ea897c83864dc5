#!/usr/bin/env python3
"""abs / complex_sign_zero_grad: abs of a complex z: the VJP of its VJP is 0 (Sign::vjp returns zeros, so d(g sign z) drops z/|z|'s derivative)
Minimal input: unary/abs/complex64/reversed; second:a: MLX [[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[0.0,... vs float64 rule [[[0.4789678719572251, 0.7902969887296746], [-0.903789459.... MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.abs(a)


a = mx.array(np.array([complex(50.0, 0.0), complex(2.0625, 0.9375), complex(50.0, 0.0), complex(-2.0625, -2.0), complex(50.0, 0.0), complex(-0.25, 1.5625), complex(50.0, 0.0), complex(0.5, -1.625), complex(50.0, 0.0), complex(0.5, 2.4375), complex(50.0, 0.0), complex(-1.75, -2.0), complex(50.0, 0.0), complex(-0.75, -2.25), complex(50.0, 0.0), complex(-1.0, 0.8125), complex(50.0, 0.0), complex(-1.1875, -0.9375), complex(50.0, 0.0), complex(-2.125, -2.0625), complex(50.0, 0.0), complex(-0.8125, -2.8125), complex(50.0, 0.0), complex(2.0625, -1.25)], dtype=np.complex64).reshape((3, 8)), dtype=mx.complex64)
mx.eval(a)
a = a[None:None:-1, None:None:-2]
g = mx.array(np.array([-1.0, -1.0, -3.0, -2.0, -2.0, 2.0, 1.0, -3.0, 1.0, -1.0, -1.0, 2.0]).reshape((3, 4)), dtype=mx.complex64)
# the float64 rule: d|x| = sign(x) g (0 at x = 0, MLX's convention); z/|z| g for complex z
# second order: the gradient of <u, J^T g> is H u (the operands) and J u (the cotangent)
want = {"second:a": np.array([complex(0.4789678719572251, 0.7902969887296746), complex(-0.9037894591541389, 0.26109473264431465), complex(-0.9977126115700335, 1.0279463270716567), complex(-2.80849015437878, 3.557420862212807), complex(2.6113953415677935, 3.21402503577553), complex(-1.0119288512538098, 0.33730961708501017), complex(-1.1987947349313226, 1.0489453930647703), complex(-1.6019748896295045, 0.32861023377015947), complex(1.4052534614722993, 0.43238568045291303), complex(-2.144332854333937, -0.34309325669346447), complex(-0.00527133619365774, 0.005436065449699097), complex(0.18139307147414066, -0.3990647572441075)]).reshape((3, 4)), "second:cotangent": np.array([0.18140560063248248, 2.3270632428822546, -0.021105314459317355, -1.1153597194421523, 1.697749375254329, -0.6324555320334542, -0.28221626051529836, 3.3406963893671398, -1.3233863197690574, 2.4883503924300836, 1.414046229524783, -1.3241694217633728]).reshape((3, 4))}
try:
    mx.eval(f(a))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
u = [mx.array(np.array([complex(-1.0, -2.0), complex(2.0, -3.0), complex(1.0, -1.0), complex(3.0, -2.0), complex(-3.0, -1.0), complex(-1.0, 1.0), complex(-3.0, 3.0), complex(2.0, 3.0), complex(2.0, 2.0), complex(3.0, 3.0), complex(-1.0, -1.0), complex(-1.0, -1.0)]).reshape((3, 4)), dtype=mx.complex64)]
h = lambda a, g: sum(mx.sum(mx.real(mx.conj(d) * x)) for d, x in zip(u, mx.vjp(f, [a], [g])[1]))   # <u, J^T g>
try:
    mx.eval(got := dict(zip(want, mx.grad(h, argnums=list(range(2)))(a, g))))
except Exception as e:
    try:   # the transform's fault only where the call works without it
        mx.eval(mx.vjp(f, [a], [g]))
    except Exception as e2:
        sys.exit(print("cannot test: without the transform it raises too:", e2) or 125)
    sys.exit(print(f"VERDICT: defect present (second_order raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.complex64 if x.dtype == mx.complex64 else mx.float32)) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))
