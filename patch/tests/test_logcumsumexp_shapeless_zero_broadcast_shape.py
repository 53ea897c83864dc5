import unittest

import mlx.core as mx
import mlx_tests


class TestCompiledShapelessZeroBroadcast(mlx_tests.MLXTestCase):
    # A fused elementwise kernel under shapeless compilation has the shape its
    # inputs broadcast to: a size 0 axis against a size 1 one stays 0, and
    # inputs that do not broadcast are an error (not a read past a buffer).

    def test_zero_against_one(self):
        fun = mx.compile(lambda a: mx.exp(a + mx.zeros((1,))), shapeless=True)
        self.assertEqual(fun(mx.zeros((2, 3))).shape, (2, 3))
        self.assertEqual(fun(mx.zeros((2, 0))).shape, (2, 0))

    def test_select_against_size_one(self):
        # As in logcumsumexp's VJP: the cotangent where x equals a (1,) array
        def fun(x, g):
            return mx.where(x == mx.zeros((1,)), g, 2 * g)

        cf = mx.compile(fun, shapeless=True)
        x, g = mx.array([[0.0, 1.0]]), mx.array([[1.0, 1.0]])
        self.assertEqual(cf(x, g).tolist(), [[1.0, 2.0]])
        self.assertEqual(cf(mx.zeros((2, 0)), mx.zeros((2, 0))).shape, (2, 0))


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
