import unittest

import mlx.core as mx
import mlx_tests


def as_1d(values):
    return mx.array(values, mx.float32).reshape(1, -1, 1)


class TestConvVJPDilatedInputPadding(mlx_tests.MLXTestCase):
    # With input dilation, strides and low padding the VJP's convolutions
    # need negative padding; it must not be cut from the undilated operand.
    # y[o] = sum_j w[j] xp[o * s + j], dx[i] = sum_{o, j: o s + j = lo + i di} g[o] w[j],
    # dw[j] = sum_o g[o] xp[o * s + j].

    def test_output_reads_only_padding(self):
        # xp = [0, 1]: the one output reads the padding
        fun = lambda x, w: mx.conv_general(
            x, w, stride=2, input_dilation=2, padding=([1], [0])
        )
        (y,), (dx, dw) = mx.vjp(fun, [as_1d([1]), as_1d([3])], [as_1d([1])])
        self.assertEqual(y.reshape(-1).tolist(), [0])
        self.assertEqual(dx.reshape(-1).tolist(), [0])
        self.assertEqual(dw.reshape(-1).tolist(), [0])

    def test_wider(self):
        # xp = [0, 0, 1, 0, 2]: outputs read xp[0], xp[2], xp[4]
        fun = lambda x, w: mx.conv_general(
            x, w, stride=2, input_dilation=2, padding=([2], [0])
        )
        (y,), (dx, dw) = mx.vjp(fun, [as_1d([1, 2]), as_1d([3])], [as_1d([1, 2, 3])])
        self.assertEqual(y.reshape(-1).tolist(), [0, 3, 6])
        self.assertEqual(dx.reshape(-1).tolist(), [6, 9])
        self.assertEqual(dw.reshape(-1).tolist(), [8])

    def test_each_gradient_alone(self):
        fun = lambda x, w: mx.conv_general(
            x, w, stride=2, input_dilation=2, padding=([2], [0])
        ).sum()
        x, w = as_1d([1, 2]), as_1d([3])
        self.assertEqual(mx.grad(fun)(x, w).reshape(-1).tolist(), [3, 3])
        self.assertEqual(mx.grad(fun, argnums=1)(x, w).reshape(-1).tolist(), [3])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
