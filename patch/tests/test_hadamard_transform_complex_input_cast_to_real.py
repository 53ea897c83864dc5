import unittest

import mlx.core as mx
import mlx_tests


class TestHadamardTransformComplex(mlx_tests.MLXTestCase):
    # hadamard_transform(a) = scale * H a along the last axis (the docs:
    # hadamard(n) @ a * scale). H is real, so for complex a the transform is
    # H re(a) + i H im(a), complex64; the VJP is scale * H^T g and the JVP
    # scale * H t (H_2 and H_4 are symmetric).

    def test_forward(self):
        # H_2 = [[1, 1], [1, -1]]: [1+2j + 3-1j, 1+2j - (3-1j)]
        a = mx.array([1 + 2j, 3 - 1j])
        y = mx.hadamard_transform(a, scale=1.0)
        self.assertEqual(y.dtype, mx.complex64)
        self.assertEqual(y.tolist(), [4 + 1j, -2 + 3j])

    def test_default_scale(self):
        # n = 4, scale 1/2: H_4 [1j, 2, 0, -1j] = [2, -2+2j, 2+2j, -2]
        a = mx.array([1j, 2, 0, -1j])
        y = mx.hadamard_transform(a)
        self.assertTrue(mx.allclose(y, mx.array([1, -1 + 1j, 1 + 1j, -1])))

    def test_vjp_jvp(self):
        # H_2 [1, 1j] = [1+1j, 1-1j], for the VJP and the JVP
        a = mx.array([1 + 2j, 3 - 1j])
        g = mx.array([1 + 0j, 1j])
        f = lambda x: mx.hadamard_transform(x, scale=1.0)
        _, (da,) = mx.vjp(f, [a], [g])
        self.assertEqual(da.tolist(), [1 + 1j, 1 - 1j])
        _, (dy,) = mx.jvp(f, [a], [g])
        self.assertEqual(dy.tolist(), [1 + 1j, 1 - 1j])

    def test_real_unchanged(self):
        # Real and integer input: float32 (or the input's float type) as before
        y = mx.hadamard_transform(mx.array([1.0, 2.0]), scale=1.0)
        self.assertEqual(y.dtype, mx.float32)
        self.assertEqual(y.tolist(), [3.0, -1.0])
        y = mx.hadamard_transform(mx.array([1, 2]), scale=1.0)
        self.assertEqual(y.dtype, mx.float32)
        self.assertEqual(y.tolist(), [3.0, -1.0])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
