import unittest

import mlx.core as mx
import mlx_tests


def as_1d(values):
    return mx.array(values, mx.float32).reshape(1, -1, 1)


class TestConvWeightGradDilatedInput(mlx_tests.MLXTestCase):
    # y[o] = sum_j w[j] xp[o * s + j * dk] (flipped: w[K - 1 - j]) where xp is
    # the input dilated by di and padded, so dw[j] = sum_o g[o] xp[o * s + j * dk]:
    # one entry per kernel tap, even when the last windows end before xp does.

    def test_stride_and_input_dilation(self):
        x, w = as_1d([1, 1]), as_1d([3, 5])
        fun = lambda x, w: mx.conv_general(x, w, stride=2, input_dilation=2)
        # xp = [1, 0, 1]: one output, reading xp[0] and xp[1]
        (y,), (dx, dw) = mx.vjp(fun, [x, w], [as_1d([1])])
        self.assertEqual(y.reshape(-1).tolist(), [3])
        self.assertEqual(dw.shape, w.shape)
        self.assertEqual(dw.reshape(-1).tolist(), [1, 0])
        self.assertEqual(dx.reshape(-1).tolist(), [3, 0])

    def test_stride_and_input_dilation_flipped(self):
        x, w = as_1d([1, 1]), as_1d([3, 5])
        fun = lambda x, w: mx.conv_general(x, w, stride=2, input_dilation=2, flip=True)
        (y,), (dx, dw) = mx.vjp(fun, [x, w], [as_1d([2])])
        self.assertEqual(y.reshape(-1).tolist(), [5])
        self.assertEqual(dw.shape, w.shape)
        self.assertEqual(dw.reshape(-1).tolist(), [0, 2])
        self.assertEqual(dx.reshape(-1).tolist(), [10, 0])

    def test_2d(self):
        x = mx.ones((1, 2, 2, 1))
        w = mx.ones((1, 2, 2, 1))
        fun = lambda w: mx.conv_general(x, w, stride=2, input_dilation=2).sum()
        # one output reading xp[0:2, 0:2] = [[1, 0], [0, 0]]
        dw = mx.grad(fun)(w)
        self.assertEqual(dw.shape, w.shape)
        self.assertEqual(dw.reshape(2, 2).tolist(), [[1, 0], [0, 0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
