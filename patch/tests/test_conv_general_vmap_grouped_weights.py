import unittest

import mlx.core as mx
import mlx_tests


class TestConvGeneralVmapGroupedWeights(mlx_tests.MLXTestCase):
    # vmap over the weights of a grouped convolution must equal stacking the
    # convolution of each weight: a group's output channels come from that
    # weight only.

    def test_vmap_over_weights(self):
        # x (N, L, C) = (1, 2, 2), groups 2: output channel o reads input channel o only
        x = mx.array([[[1.0, 2.0], [3.0, 4.0]]])
        w = mx.array([[1.0, 2.0], [3.0, 4.0]]).reshape(2, 2, 1, 1)
        f = lambda w: mx.conv_general(x, w, groups=2)
        expected = [[[[1.0, 4.0], [3.0, 8.0]]], [[[3.0, 8.0], [9.0, 16.0]]]]
        self.assertEqual(mx.vmap(f)(w).tolist(), expected)
        self.assertEqual(mx.vmap(f, in_axes=3)(w.moveaxis(0, 3)).tolist(), expected)

    def test_vmap_of_the_weight_vjp(self):
        x = mx.array([[[1.0, 2.0], [3.0, 4.0]]])
        w = mx.ones((2, 1, 1))
        g = mx.array([[[1.0, 10.0], [100.0, 1000.0]]])
        f = lambda w: mx.conv_general(x, w, groups=2)
        out = mx.vmap(lambda c: mx.vjp(f, [w], [c])[1][0])(mx.stack([g, 2 * g]))
        self.assertEqual(out.reshape(2, 2).tolist(), [[301.0, 4020.0], [602.0, 8040.0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
