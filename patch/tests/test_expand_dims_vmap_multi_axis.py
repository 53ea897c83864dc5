import unittest

import mlx.core as mx
import mlx_tests


class TestExpandDimsVmapMultiAxis(mlx_tests.MLXTestCase):
    # vmap(f)(x) must equal stacking f(x[..., i]) when several axes are
    # inserted on both sides of the batch axis.

    def test_axes_around_batch_axis(self):
        x = mx.arange(24).reshape(2, 3, 4)
        out = mx.vmap(lambda x: mx.expand_dims(x, (0, 2)), in_axes=2)(x)
        self.assertEqual(out.shape, (4, 1, 2, 1, 3))
        expected = mx.stack([mx.expand_dims(x[..., i], (0, 2)) for i in range(4)])
        self.assertTrue(mx.array_equal(out, expected))

    def test_axes_before_batch_axis(self):
        # Both new axes lie before the batch axis of the output
        x = mx.arange(24).reshape(2, 3, 4)
        out = mx.vmap(lambda x: mx.expand_dims(x, (0, 1)), in_axes=1)(x)
        self.assertEqual(out.shape, (3, 1, 1, 2, 4))
        expected = mx.stack([mx.expand_dims(x[:, i], (0, 1)) for i in range(3)])
        self.assertTrue(mx.array_equal(out, expected))

    def test_vmap_of_squeeze_vjp(self):
        # The VJP of squeeze is an expand_dims of the cotangent
        x = mx.zeros((1, 3, 1))
        g = mx.arange(6, dtype=mx.float32).reshape(3, 2)

        def grad(g):
            return mx.vjp(lambda x: mx.squeeze(x, (0, 2)), [x], [g])[1][0]

        out = mx.vmap(grad, in_axes=1)(g)
        self.assertEqual(out.shape, (2, 1, 3, 1))
        self.assertEqual(
            out.tolist(), [[[[0.0], [2.0], [4.0]]], [[[1.0], [3.0], [5.0]]]]
        )


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
