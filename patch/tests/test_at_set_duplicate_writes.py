import unittest

import mlx.core as mx
import mlx_tests


class TestScatterSetDuplicateWrites(mlx_tests.MLXTestCase):
    # out = a; out[idx] = v. Where idx repeats a position, one of the updates
    # written there is left in the output (which one is not specified) and
    # only that one gets the position's cotangent; the others get 0.

    def test_shared_value(self):
        # Both writes carry v[0]: out[0] = v[0], so dv = g
        def fun(a, v):
            out = mx.array(a)
            out[mx.array([0, 0])] = mx.take(v, mx.array([0, 0]), axis=0)
            return out

        a, v = mx.array([[1.0]]), mx.array([[8.0]])
        (y,), (da, dv) = mx.vjp(fun, [a, v], [mx.array([[1.0]])])
        self.assertEqual(y.tolist(), [[8.0]])
        self.assertEqual(da.tolist(), [[0.0]])
        self.assertEqual(dv.tolist(), [[1.0]])

    def test_broadcast_value(self):
        # One row written twice to row 1: the row's cotangent once
        def fun(a, v):
            out = mx.array(a)
            out[mx.array([1, 1])] = v
            return out

        a = mx.zeros((3, 2))
        v = mx.array([5.0, 7.0])
        g = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        _, (da, dv) = mx.vjp(fun, [a, v], [g])
        self.assertEqual(da.tolist(), [[1.0, 2.0], [0.0, 0.0], [5.0, 6.0]])
        self.assertEqual(dv.tolist(), [3.0, 4.0])

    def test_distinct_values(self):
        # u[0] and u[1] both written to position 1: the one the output holds
        # gets g[1], the other 0
        def fun(a, u):
            out = mx.array(a)
            out[mx.array([1, 1])] = u
            return out

        a = mx.zeros((3,))
        u = mx.array([5.0, 7.0])
        g = mx.array([1.0, 2.0, 3.0])
        (y,), (da, du) = mx.vjp(fun, [a, u], [g])
        winner = [5.0, 7.0].index(y[1].item())
        expected = [0.0, 0.0]
        expected[winner] = 2.0
        self.assertEqual(du.tolist(), expected)
        self.assertEqual(da.tolist(), [1.0, 0.0, 3.0])

    def test_slice_windows(self):
        # Rows then a column range: windows two wide on the sliced axis; row
        # 1 written twice, the rows the output holds get the cotangent
        def fun(a, u):
            out = mx.array(a)
            out[mx.array([1, 1]), 0:2] = u
            return out

        a = mx.zeros((2, 3))
        u = mx.array([[1.0, 2.0], [3.0, 4.0]])
        g = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        (y,), (da, du) = mx.vjp(fun, [a, u], [g])
        winner = [1.0, 3.0].index(y[1, 0].item())
        expected = [[0.0, 0.0], [0.0, 0.0]]
        expected[winner] = [4.0, 5.0]
        self.assertEqual(du.tolist(), expected)
        self.assertEqual(da.tolist(), [[1.0, 2.0, 3.0], [0.0, 0.0, 6.0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
