import unittest

import mlx.core as mx
import mlx_tests


def conv_vjp(x, w, cotan, **kwargs):
    fun = lambda x, w: mx.conv_general(x, w, **kwargs)
    (y,), (dx, dw) = mx.vjp(fun, [x, w], [cotan])
    return y, dx, dw


def as_1d(values):
    return mx.array(values, mx.float32).reshape(1, -1, 1)


class TestConvInputGradPadding(mlx_tests.MLXTestCase):
    # Along one axis with stride s, kernel dilation dk, input dilation di and
    # padding (lo, hi): y[o] = sum_j w[j] xp[o * s + j * dk], where xp is the
    # input dilated by di and padded. The input gradient is
    # dx[i] = sum_{o, j: o * s + j * dk = lo + i * di} g[o] w[j],
    # one entry per input element whatever the padding.

    def test_asymmetric_padding(self):
        x, w = as_1d([1, 2, 3]), as_1d([2, 1])
        g = as_1d([1, 2, 3, 4])

        # xp = [1, 2, 3, 0, 0]
        y, dx, dw = conv_vjp(x, w, g, padding=([0], [2]))
        self.assertEqual(y.reshape(-1).tolist(), [4, 7, 6, 0])
        self.assertEqual(dx.reshape(-1).tolist(), [2, 5, 8])
        self.assertEqual(dx.shape, x.shape)
        self.assertEqual(dw.reshape(-1).tolist(), [14, 8])

        # xp = [0, 0, 1, 2, 3]
        y, dx, dw = conv_vjp(x, w, g, padding=([2], [0]))
        self.assertEqual(y.reshape(-1).tolist(), [0, 1, 4, 7])
        self.assertEqual(dx.reshape(-1).tolist(), [8, 11, 4])
        self.assertEqual(dx.shape, x.shape)
        self.assertEqual(dw.reshape(-1).tolist(), [11, 20])

    def test_dilated_input_high_padding(self):
        # xp = [1, 0]: the padding alone makes the second output
        y, dx, dw = conv_vjp(
            as_1d([1]),
            as_1d([3]),
            as_1d([1, 1]),
            input_dilation=2,
            padding=([0], [1]),
        )
        self.assertEqual(y.reshape(-1).tolist(), [3, 0])
        self.assertEqual(dx.shape, (1, 1, 1))
        self.assertEqual(dx.reshape(-1).tolist(), [3])
        self.assertEqual(dw.reshape(-1).tolist(), [1])

    def test_asymmetric_padding_2d(self):
        x = mx.ones((1, 2, 3, 1))
        w = mx.ones((1, 2, 2, 1))
        fun = lambda x: mx.conv_general(x, w, padding=([0, 2], [1, 0])).sum()
        # xp has 3 rows (one padded below) and 5 columns (two padded left),
        # the output 2 x 4; dx counts the windows that cover each element:
        # rows 1, 2 and columns 2, 2, 1
        dx = mx.grad(fun)(x)
        self.assertEqual(dx.shape, x.shape)
        self.assertEqual(dx.reshape(2, 3).tolist(), [[2, 2, 1], [4, 4, 2]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
