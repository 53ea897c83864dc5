import unittest

import mlx.core as mx
import mlx_tests


class TestPadValueGrad(mlx_tests.MLXTestCase):
    # y = pad(a, width, constant_values=c): c fills every position outside a,
    # so dc = sum of the cotangent there (a scalar, c's shape) and da = the
    # cotangent inside.

    def test_value_grad(self):
        a = mx.array([1.0, 2.0])
        c = mx.array(3.0)
        fun = lambda c: mx.pad(a, 1, constant_values=c)
        (y,), (dc,) = mx.vjp(fun, [c], [mx.array([1.0, 2.0, 3.0, 4.0])])
        self.assertEqual(y.tolist(), [3.0, 1.0, 2.0, 3.0])
        self.assertEqual(dc.shape, ())
        self.assertEqual(dc.item(), 5.0)

        # No padding: c is not used
        fun = lambda c: mx.pad(a, 0, constant_values=c)
        _, (dc,) = mx.vjp(fun, [c], [mx.array([1.0, 1.0])])
        self.assertEqual(dc.shape, ())
        self.assertEqual(dc.item(), 0.0)

    def test_value_and_input_grad(self):
        a = mx.array([[1.0, 2.0]])
        c = mx.array(3.0)
        fun = lambda a, c: mx.pad(a, [(1, 0), (0, 2)], constant_values=c)
        g = mx.arange(8, dtype=mx.float32).reshape(2, 4)
        _, (da, dc) = mx.vjp(fun, [a, c], [g])
        # a sits in row 1, columns 0 and 1
        self.assertEqual(da.tolist(), [[4.0, 5.0]])
        self.assertEqual(dc.item(), 0.0 + 1.0 + 2.0 + 3.0 + 6.0 + 7.0)

    def test_value_jvp(self):
        a = mx.array([1.0, 2.0])
        fun = lambda a, c: mx.pad(a, (1, 0), constant_values=c)
        _, (t,) = mx.jvp(fun, [a, mx.array(3.0)], [mx.zeros((2,)), mx.array(1.0)])
        self.assertEqual(t.tolist(), [1.0, 0.0, 0.0])

    def test_padded_axes_by_position(self):
        # Pad's sizes are listed per padded axis, not per dimension: the
        # weight gradient of a padded convolution pads axis 1 only, and its
        # own gradient must cut that padding from axis 1. With
        # dw[k] = sum_o xp[o + k] for xp = x padded by (2, 1),
        # d(sum_k dw[k]) / dx[i] = #{(o, k): o + k = i + 2}.
        x = mx.arange(6, dtype=mx.float32).reshape(1, 6, 1)
        w = mx.ones((1, 3, 1))

        def weight_grad_sum(x):
            fun = lambda w: mx.conv_general(x, w, padding=([2], [1]))
            _, (dw,) = mx.vjp(fun, [w], [mx.ones((1, 7, 1))])
            return dw.sum()

        dx = mx.grad(weight_grad_sum)(x)
        self.assertEqual(dx.reshape(-1).tolist(), [3.0, 3.0, 3.0, 3.0, 3.0, 2.0])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
