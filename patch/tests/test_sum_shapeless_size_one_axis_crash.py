import unittest

import mlx.core as mx
import mlx_tests


class TestReduceSingletonAxes(mlx_tests.MLXTestCase):
    # Under shapeless compilation a reduction over axes of size 1 stays in the
    # graph (the axes may be larger at a later call); evaluating it must give
    # the elements themselves.

    def test_shapeless_sum_size_one_axis(self):
        fun = mx.compile(lambda x: mx.sum(x, axis=1), shapeless=True)
        out = fun(mx.array([[1.5], [-2.0]]))
        self.assertEqual(out.tolist(), [1.5, -2.0])
        out = fun(mx.array([[1.0, 2.0], [3.0, 4.0]]))
        self.assertEqual(out.tolist(), [3.0, 7.0])

    def test_shapeless_reductions_size_one_axes(self):
        x = mx.array([[[1.0]], [[-3.0]]])
        for op in (mx.sum, mx.prod, mx.max, mx.min, mx.mean):
            fun = mx.compile(lambda x: op(x, axis=(1, 2)), shapeless=True)
            self.assertEqual(fun(x).tolist(), [1.0, -3.0])

    def test_shapeless_reduction_transposed_input(self):
        # A non-contiguous input takes the general plan
        x = mx.array([[1.0, 2.0, 3.0]]).T[None]
        fun = mx.compile(lambda x: mx.sum(x, axis=(0, 2)), shapeless=True)
        self.assertEqual(fun(x).tolist(), [1.0, 2.0, 3.0])

    def test_shapeless_mean_grad(self):
        fun = mx.compile(mx.grad(lambda x: mx.mean(x, axis=1).sum()), shapeless=True)
        self.assertEqual(fun(mx.array([[2.0], [3.0]])).tolist(), [[1.0], [1.0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
