import unittest

import mlx.core as mx
import mlx_tests


class TestDiagonalVjpZeroSize(mlx_tests.MLXTestCase):
    # The VJP of diagonal of an array with a zero-size axis is an empty
    # gradient of the input's shape.

    def test_zero_size_batch_axis(self):
        x, g = mx.zeros((0, 3, 4)), mx.zeros((0, 3))
        (dx,) = mx.vjp(lambda y: mx.diagonal(y, axis1=1, axis2=2), [x], [g])[1]
        mx.eval(dx)
        self.assertEqual(dx.shape, (0, 3, 4))

    def grad_shape(self, shape, gshape):
        x, g = mx.zeros(shape), mx.zeros(gshape)
        (dx,) = mx.vjp(lambda y: mx.diagonal(y, axis1=-2, axis2=-1), [x], [g])[1]
        mx.eval(dx)
        return dx.shape

    def test_zero_size_diagonal_axis(self):
        self.assertEqual(self.grad_shape((0, 4), (0,)), (0, 4))
        self.assertEqual(self.grad_shape((3, 0), (0,)), (3, 0))
        self.assertEqual(self.grad_shape((2, 0, 4), (2, 0)), (2, 0, 4))

    def test_trace_grad(self):
        dx = mx.grad(lambda y: mx.trace(y, axis1=1, axis2=2).sum())(mx.zeros((0, 2, 2)))
        self.assertEqual(dx.shape, (0, 2, 2))

    def test_scatter_add_empty_windows(self):
        # Windows of size 0 write nothing
        a = mx.zeros((2, 0))
        out = a.at[mx.array([0, 1, 1])].add(mx.zeros((3, 0)))
        self.assertEqual(out.shape, (2, 0))


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
