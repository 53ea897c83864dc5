import math
import unittest

import mlx.core as mx
import mlx_tests


class TestHadamardTransformVJP(mlx_tests.MLXTestCase):
    # hadamard_transform(x) = scale * H x along the last axis, where for
    # n = m * 2^k the matrix is H = H_m kron H_(2^k) (the axis viewed as
    # (m, 2^k)). Its VJP is scale * H^T g. The Sylvester factor is symmetric,
    # the order 20 and 28 factors are not, so H g is not the gradient.

    def test_order_20(self):
        # a = ones: H^T 1 holds the column sums of H_20
        x = mx.ones((1, 20))
        g = mx.ones((1, 20))
        _, (dx,) = mx.vjp(lambda x: mx.hadamard_transform(x, scale=1.0), [x], [g])
        expected = [-2.0] * 5 + [-6.0] * 10 + [2.0] * 5
        self.assertEqual(dx.tolist(), [expected])

    def test_order_28_unit_cotangent(self):
        # H^T e_1 is row 1 of H_28: "-+-----+++-----+-+--+-+--++-"
        x = mx.zeros((28,))
        g = mx.zeros((28,))
        g[1] = 1.0
        _, (dx,) = mx.vjp(lambda x: mx.hadamard_transform(x, scale=1.0), [x], [g])
        row = "-+-----+++-----+-+--+-+--++-"
        expected = [1.0 if c == "+" else -1.0 for c in row]
        self.assertEqual(dx.tolist(), expected)

        # The forward (and the JVP) multiply by H itself: column 1 of H_28
        _, (dy,) = mx.jvp(lambda x: mx.hadamard_transform(x, scale=1.0), [x], [g])
        self.assertNotEqual(dy.tolist(), expected)

    def test_order_40_default_scale(self):
        # n = 40 = 20 * 2: both factors, and the default scale 1 / sqrt(40)
        g = mx.zeros((40,))
        g[0] = 1.0
        g[3] = 2.0
        g[21] = -1.0
        x = mx.zeros((40,))
        _, (dx,) = mx.vjp(mx.hadamard_transform, [x], [g])
        # fmt: off
        unscaled = [0, 2, 2, -4, -4, 2, -4, 2, -2, 0, -2, 4, 2, -4, -4, 2, -4,
                    2, -2, 0, 2, 0, 4, -2, 2, -4, -2, 0, 0, 2, 0, 2, 0, -2, -2,
                    4, 2, 0, 0, -2]
        # fmt: on
        expected = mx.array(unscaled, mx.float32) / math.sqrt(40)
        self.assertTrue(mx.allclose(dx, expected, atol=1e-6))

    def test_half_precision(self):
        for dtype in (mx.float16, mx.bfloat16):
            x = mx.ones((2, 20), dtype)
            g = mx.ones((2, 20), dtype)
            _, (dx,) = mx.vjp(lambda x: mx.hadamard_transform(x, scale=1.0), [x], [g])
            self.assertEqual(dx.dtype, dtype)
            expected = [-2.0] * 5 + [-6.0] * 10 + [2.0] * 5
            self.assertEqual(dx.astype(mx.float32).tolist(), [expected] * 2)


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
