import unittest

import mlx.core as mx
import mlx_tests


class TestScatterMaxArrayThenSlice(mlx_tests.MLXTestCase):
    # a.at[idx, start:stop].maximum(v) compares windows of stop - start
    # columns: each element of v gets the cotangent where it wins.

    def test_full_slice(self):
        fun = lambda a, v: a.at[mx.array([0]), :].maximum(v)
        a = mx.array([[8.0, -4.0, -8.0]])
        v = mx.array([[0.0, -12.0, 4.0]])
        (y,), (da, dv) = mx.vjp(fun, [a, v], [mx.array([[1.0, 2.0, 3.0]])])
        self.assertEqual(y.tolist(), [[8.0, -4.0, 4.0]])
        self.assertEqual(da.tolist(), [[1.0, 2.0, 0.0]])
        self.assertEqual(dv.tolist(), [[0.0, 0.0, 3.0]])

    def test_range(self):
        fun = lambda a, v: a.at[mx.array([1, 0]), 1:3].maximum(v)
        a = mx.zeros((2, 4))
        v = mx.array([[1.0, -1.0], [-1.0, 1.0]])
        g = mx.arange(8, dtype=mx.float32).reshape(2, 4)
        _, (da, dv) = mx.vjp(fun, [a, v], [g])
        self.assertEqual(dv.tolist(), [[5.0, 0.0], [0.0, 2.0]])
        self.assertEqual(da.tolist(), [[0.0, 1.0, 0.0, 3.0], [4.0, 0.0, 6.0, 7.0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
