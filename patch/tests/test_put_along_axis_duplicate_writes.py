import unittest

import mlx.core as mx
import mlx_tests


class TestPutAlongAxisDuplicateWrites(mlx_tests.MLXTestCase):
    # put_along_axis with an index repeated: one of the values written there
    # is left in the output (which one is not specified) and only that one
    # gets the position's cotangent; the others get 0.

    def test_repeated_index(self):
        a = mx.zeros((1, 3))
        idx = mx.array([[1, 1]])
        v = mx.array([[2.0, 5.0]])
        g = mx.array([[1.0, 2.0, 3.0]])
        fun = lambda a, v: mx.put_along_axis(a, idx, v, axis=1)
        (y,), (da, dv) = mx.vjp(fun, [a, v], [g])
        winner = [2.0, 5.0].index(y[0, 1].item())
        expected = [0.0, 0.0]
        expected[winner] = 2.0
        self.assertEqual(dv.tolist(), [expected])
        self.assertEqual(da.tolist(), [[1.0, 0.0, 3.0]])

    def test_vjp_agrees_with_jvp(self):
        # The duplicates' gradients sum to the position's cotangent, and
        # <g, J t> = <J^T g, t> along each value
        a = mx.zeros((2, 3))
        idx = mx.array([[0, 2, 0], [1, 1, 1]])
        v = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        g = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        fun = lambda v: mx.put_along_axis(a, idx, v, axis=1)
        (dv,) = mx.vjp(fun, [v], [g])[1]
        self.assertEqual((dv[0, 0] + dv[0, 2]).item(), 1.0)
        self.assertEqual(dv[0, 1].item(), 3.0)
        self.assertEqual(mx.sum(dv[1]).item(), 5.0)
        for i in range(2):
            for j in range(3):
                t = mx.zeros((2, 3)).at[i, j].add(1.0)
                (jt,) = mx.jvp(fun, [v], [t])[1]
                self.assertEqual(dv[i, j].item(), mx.sum(g * jt).item())

    def test_distinct_indices(self):
        a = mx.zeros((2, 2))
        idx = mx.array([[1], [0]])
        v = mx.array([[7.0], [8.0]])
        g = mx.array([[1.0, 2.0], [3.0, 4.0]])
        fun = lambda v: mx.put_along_axis(a, idx, v, axis=1)
        (dv,) = mx.vjp(fun, [v], [g])[1]
        self.assertEqual(dv.tolist(), [[2.0], [3.0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
