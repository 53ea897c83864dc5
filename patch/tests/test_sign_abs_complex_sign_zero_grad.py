import unittest

import mlx.core as mx
import mlx_tests


class TestComplexSignGrad(mlx_tests.MLXTestCase):
    # For complex z, sign(z) = s = z / |z| and
    #   d sign(z) = (t - Re(conj(s) t) s) / |z|,
    # a self-adjoint map, so the VJP of g is (g - Re(conj(g) s) s) / |z|.
    # z = 3 + 4i: |z| = 5, s = 0.6 + 0.8i. At z = 0 it is taken as 0 (as
    # abs'). For real input the derivative is 0.

    def test_sign_vjp(self):
        z = mx.array(3 + 4j)
        _, (dz,) = mx.vjp(mx.sign, [z], [mx.array(1 + 0j)])
        # (1 - 0.6 s) / 5
        self.assertTrue(mx.allclose(dz, mx.array(0.128 - 0.096j)))
        _, (dz,) = mx.vjp(mx.sign, [z], [mx.array(1j)])
        # Re(conj(i) s) = 0.8: (i - 0.8 s) / 5
        self.assertTrue(mx.allclose(dz, mx.array(-0.096 + 0.072j)))

    def test_sign_jvp(self):
        z = mx.array(3 + 4j)
        _, (t,) = mx.jvp(mx.sign, [z], [mx.array(1 + 0j)])
        self.assertTrue(mx.allclose(t, mx.array(0.128 - 0.096j)))

    def test_sign_at_zero_and_real(self):
        z = mx.array([0j, 3 + 4j])
        _, (dz,) = mx.vjp(mx.sign, [z], [mx.array([1 + 1j, 1 + 0j])])
        self.assertTrue(mx.allclose(dz, mx.array([0j, 0.128 - 0.096j])))
        _, (dx,) = mx.vjp(mx.sign, [mx.array([-2.0, 0.0, 3.0])], [mx.ones(3)])
        self.assertEqual(dx.tolist(), [0.0, 0.0, 0.0])

    def test_abs_second_order(self):
        # d|z| = Re(conj(s) t): the VJP of abs is g s, and the gradient of
        # Re(s) = x / |z| is (y^2 - i x y) / |z|^3 = 0.128 - 0.096i.
        def dabs(z):
            _, (dz,) = mx.vjp(mx.abs, [z], [mx.array(1.0)])
            return mx.real(dz)

        _, (d2,) = mx.vjp(dabs, [mx.array(3 + 4j)], [mx.array(1.0)])
        self.assertTrue(mx.allclose(d2, mx.array(0.128 - 0.096j)))


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
