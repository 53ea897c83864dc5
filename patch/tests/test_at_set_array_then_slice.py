import unittest

import mlx.core as mx
import mlx_tests


class TestScatterSetArrayThenSlice(mlx_tests.MLXTestCase):
    # out[idx, start:stop] = v writes windows of stop - start columns; the
    # gradient of v is the cotangent in those windows, the gradient of a the
    # cotangent with the windows zeroed.

    def test_full_slice(self):
        def fun(a, v):
            out = mx.array(a)
            out[mx.array([0]), :] = v
            return out

        a, v = mx.array([[1.0, 1.0]]), mx.array([[8.0, 9.0]])
        (y,), (da, dv) = mx.vjp(fun, [a, v], [mx.array([[1.0, 2.0]])])
        self.assertEqual(y.tolist(), [[8.0, 9.0]])
        self.assertEqual(da.tolist(), [[0.0, 0.0]])
        self.assertEqual(dv.tolist(), [[1.0, 2.0]])

    def test_range(self):
        def fun(a, v):
            out = mx.array(a)
            out[mx.array([2, 0]), 1:3] = v
            return out

        a = mx.zeros((3, 4))
        v = mx.ones((2, 2))
        g = mx.arange(12, dtype=mx.float32).reshape(3, 4)
        _, (da, dv) = mx.vjp(fun, [a, v], [g])
        self.assertEqual(dv.tolist(), [[9.0, 10.0], [1.0, 2.0]])
        self.assertEqual(
            da.tolist(),
            [[0.0, 0.0, 0.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 0.0, 0.0, 11.0]],
        )

    def test_add(self):
        # The same windows for .at[].add
        fun = lambda a, v: a.at[mx.array([1]), 1:].add(v)
        a = mx.zeros((2, 3))
        g = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        _, (da, dv) = mx.vjp(fun, [a, mx.ones((1, 2))], [g])
        self.assertEqual(dv.tolist(), [[5.0, 6.0]])
        self.assertEqual(da.tolist(), g.tolist())


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
