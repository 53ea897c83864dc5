import math
import unittest

import mlx.core as mx
import mlx_tests


class TestComplexPowerGrad(mlx_tests.MLXTestCase):
    # y = a^b, holomorphic in a and b. MLX's complex VJPs are g * conj(f'),
    # as Exp, Log, Multiply and Divide already do:
    #   da = g conj(b a^(b-1)),  db = g conj(a^b log a).
    # The JVP is t * f' (no conjugate).
    # a = 1 + i, b = 2: b a = 2 + 2i; a^b log a = 2i (log(2) / 2 + i pi / 4)
    # = -pi / 2 + i log(2).

    def test_vjp(self):
        a = mx.array(1 + 1j)
        b = mx.array(2 + 0j)
        _, (da, db) = mx.vjp(mx.power, [a, b], [mx.array(1 + 0j)])
        self.assertTrue(mx.allclose(da, mx.array(2 - 2j)))
        self.assertTrue(mx.allclose(db, mx.array(-math.pi / 2 - 1j * math.log(2))))
        # a complex cotangent: i * conj(2 + 2i) = 2 + 2i
        _, (da,) = mx.vjp(lambda a: mx.power(a, b), [a], [mx.array(1j)])
        self.assertTrue(mx.allclose(da, mx.array(2 + 2j)))

    def test_jvp_not_conjugated(self):
        a = mx.array(1 + 1j)
        b = mx.array(2 + 0j)
        _, (t,) = mx.jvp(mx.power, [a, b], [mx.array(1 + 0j), mx.array(0j)])
        self.assertTrue(mx.allclose(t, mx.array(2 + 2j)))

    def test_real_unchanged(self):
        # d 2^3 / da = 3 * 4 = 12, d 2^3 / db = 8 log 2
        _, (da, db) = mx.vjp(mx.power, [mx.array(2.0), mx.array(3.0)], [mx.array(1.0)])
        self.assertAlmostEqual(da.item(), 12.0, places=5)
        self.assertAlmostEqual(db.item(), 8 * math.log(2), places=5)


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
