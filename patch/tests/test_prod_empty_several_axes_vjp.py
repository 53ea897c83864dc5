import unittest

import mlx.core as mx
import mlx_tests


class TestProdVJPSeveralAxes(mlx_tests.MLXTestCase):
    # d prod(x over a group) / d x_i = product of the rest of its group. Over
    # several axes the VJP moves them last and flattens them; for an empty
    # operand the flattened size cannot be inferred (-1), it must be given.

    def test_empty_operand(self):
        x = mx.zeros((2, 0, 3))
        fun = lambda x: mx.prod(x, axis=[0, 2])
        (y,), (dx,) = mx.vjp(fun, [x], [mx.ones((0,))])
        self.assertEqual(y.shape, (0,))
        self.assertEqual(dx.shape, (2, 0, 3))
        mx.eval(dx)

        fun = lambda x: mx.prod(x, axis=[0, 2], keepdims=True)
        (y,), (dx,) = mx.vjp(fun, [x], [mx.ones((1, 0, 1))])
        self.assertEqual(dx.shape, (2, 0, 3))
        mx.eval(dx)

    def test_several_axes(self):
        # groups over axes 0 and 2: {1, 2, 3, 4} and {5, 6, 7, 8}
        x = mx.array([[[1.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [7.0, 8.0]]])
        fun = lambda x: mx.prod(x, axis=[0, 2])
        (y,), (dx,) = mx.vjp(fun, [x], [mx.array([1.0, 2.0])])
        self.assertEqual(y.tolist(), [24.0, 1680.0])
        self.assertEqual(
            dx.tolist(),
            [[[24.0, 12.0], [672.0, 560.0]], [[8.0, 6.0], [480.0, 420.0]]],
        )


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
