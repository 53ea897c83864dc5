#!/usr/bin/env python3
"""power / complex_power_unconjugated: power of complex inputs: Power::vjp does not conjugate the derivative (MLX's own convention conjugates)
Minimal input: binary/power/complex64/reversed; grad:a: MLX [[[8.052145004272461, -2.075870990753174], [-0.9007000327... vs float64 rule [[[-2.0758708382377864, 8.05214519634781], [-1.7513455975.... MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, b):
    return mx.power(a, b)


a = mx.array(np.array([complex(50.0, 0.0), complex(0.25, -0.4375), complex(50.0, 0.0), complex(-0.5625, 0.625), complex(50.0, 0.0), complex(-0.375, 0.25), complex(50.0, 0.0), complex(-0.375, 0.6875), complex(50.0, 0.0), complex(0.375, -0.25), complex(50.0, 0.0), complex(-0.4375, -0.25), complex(50.0, 0.0), complex(-0.75, -0.4375), complex(50.0, 0.0), complex(-0.75, -0.5625), complex(50.0, 0.0), complex(0.75, -0.25), complex(50.0, 0.0), complex(-0.625, 0.5625), complex(50.0, 0.0), complex(0.3125, 0.75), complex(50.0, 0.0), complex(-0.375, 0.25)], dtype=np.complex64).reshape((3, 8)), dtype=mx.complex64)
mx.eval(a)
a = a[None:None:-1, None:None:-2]
b = mx.array(np.array([complex(0.6875, -0.625), complex(-0.6875, -0.25), complex(0.5625, 0.625), complex(-0.375, 0.6875), complex(-0.6875, -0.625), complex(-0.5, -0.75), complex(0.625, -0.75), complex(-0.5625, 0.4375), complex(-0.6875, 0.5), complex(0.375, 0.4375), complex(0.5625, 0.625), complex(-0.5, -0.6875)], dtype=np.complex64).reshape((4, 3)), dtype=mx.complex64)
mx.eval(b)
b = mx.transpose(b, (1, 0))
g = mx.array(np.array([complex(1.0, 1.0), complex(-3.0, -3.0), complex(-2.0, 2.0), complex(-3.0, 3.0), complex(3.0, 1.0), complex(3.0, 2.0), complex(1.0, -3.0), complex(3.0, -3.0), complex(-1.0, -1.0), complex(3.0, -3.0), complex(-1.0, 2.0), complex(-2.0, 3.0)]).reshape((3, 4)), dtype=mx.complex64)
# the float64 rule: d a^b = (g conj(b a^(b-1)), g conj(a^b log a)); 0 log 0 taken as 0
want = {"forward": np.array([complex(-1.7998491821561815, 2.2125549998559113), complex(0.40184781633877625, -0.26543941537320936), complex(-0.3532685967445001, 5.452920653384134), complex(1.0278406947135599, -0.23359275422791076), complex(-0.0907223662937004, 0.552412833472885), complex(-0.06651367802853161, 0.20462767093409703), complex(1.7844608370047095, 4.273802705516042), complex(0.6232739204527623, -0.6799443249012972), complex(0.12677011995809134, 0.20259199551177623), complex(7.868357191184441, -6.350741274467812), complex(-0.035408089665737226, -0.35430282710438965), complex(0.37108113344566285, 0.5741720192066497)]).reshape((3, 4)), "grad:a": np.array([complex(-2.0758708382377864, 8.05214519634781), complex(-1.7513455975013612, -0.9006999534673763), complex(-11.65411936273554, -13.645450887125998), complex(0.5676694841067265, 3.2096572850071396), complex(0.6054546116166657, -1.2416217473044209), complex(0.053083649280481204, -0.8284642991929603), complex(6.6464244403237664, -19.616800020611482), complex(1.3664662074240101, -7.172051878367898), complex(-0.19426723999585024, -0.3065130657879144), complex(-9.105695500299777, -85.3145907939135), complex(-0.7550104215346264, -0.27908726353250857), complex(-2.8006588198806264, 3.0739509817942356)]).reshape((3, 4)), "grad:b": np.array([complex(-10.574948256786879, 2.1438717041493263), complex(-2.26922851618346, 0.8969162602330131), complex(22.554962703650276, -29.739586136704936), complex(0.12266830304273801, -1.777549856417969), complex(4.348479616503647, 0.8128903093929842), complex(1.9224430370091328, 0.6535884914027448), complex(32.81144799880568, -22.345378746293157), complex(-3.2158323062929357, 2.163393860410428), complex(0.23747990809200925, 0.6632908368227408), complex(-45.62255760854423, -105.30077629845914), complex(-0.8626167968076962, 1.624475819782618), complex(-3.0503285826319244, -0.5190916476082992)]).reshape((3, 4))}
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
