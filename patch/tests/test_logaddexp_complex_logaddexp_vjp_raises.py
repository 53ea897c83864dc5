import math
import unittest

import mlx.core as mx
import mlx_tests


class TestComplexLogAddExpGrad(mlx_tests.MLXTestCase):
    # d log(e^a + e^b) / da = s = e^a / (e^a + e^b), / db = 1 - s; the VJP
    # is g conj(s), g conj(1 - s) (MLX's complex convention), the JVP t s.
    # a = i pi / 2, b = 0: s = i / (1 + i) = (1 + i) / 2.

    def test_vjp(self):
        a = mx.array(1j * math.pi / 2)
        b = mx.array(0j)
        _, (da, db) = mx.vjp(mx.logaddexp, [a, b], [mx.array(1 + 0j)])
        self.assertTrue(mx.allclose(da, mx.array(0.5 - 0.5j)))
        self.assertTrue(mx.allclose(db, mx.array(0.5 + 0.5j)))

    def test_jvp(self):
        a = mx.array(1j * math.pi / 2)
        b = mx.array(0j)
        _, (t,) = mx.jvp(mx.logaddexp, [a, b], [mx.array(1 + 0j), mx.array(0j)])
        self.assertTrue(mx.allclose(t, mx.array(0.5 + 0.5j)))

    def test_real_unchanged(self):
        _, (da, db) = mx.vjp(
            mx.logaddexp, [mx.array(0.0), mx.array(0.0)], [mx.array(2.0)]
        )
        self.assertEqual(da.item(), 1.0)
        self.assertEqual(db.item(), 1.0)


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
