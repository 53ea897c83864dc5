import unittest

import mlx.core as mx
import mlx_tests


class TestScatterMinTies(mlx_tests.MLXTestCase):
    # out[t] = min(a[t], every update written to t). The cotangent of a
    # position is split equally between the inputs that attain the result
    # there, as the min reduction does: a[t] if it does, and every update
    # written there that does, counted once per write. Copies of one shared
    # value written twice so get g / 2 each, g together.

    def test_shared_value(self):
        fun = lambda a, v: a.at[mx.array([0, 0])].minimum(
            mx.take(v, mx.array([0, 0]), axis=0)
        )
        a = mx.array([[0.0]])
        v = mx.array([[-4.0]])
        (y,), (da, dv) = mx.vjp(fun, [a, v], [mx.array([[1.0]])])
        self.assertEqual(y.tolist(), v.tolist())
        self.assertEqual(da.tolist(), [[0.0]])
        self.assertEqual(dv.tolist(), [[1.0]])

    def test_broadcast_value(self):
        fun = lambda a, v: a.at[mx.array([1, 1])].minimum(v)
        a = mx.array([[1.0, 2.0], [3.0, -9.0]])
        v = mx.array([0.0, 0.0])
        g = mx.array([[1.0, 2.0], [3.0, 4.0]])
        _, (da, dv) = mx.vjp(fun, [a, v], [g])
        # row 1: v wins column 0 (written twice), a wins column 1
        self.assertEqual(da.tolist(), [[1.0, 2.0], [0.0, 4.0]])
        self.assertEqual(dv.tolist(), [3.0, 0.0])

    def test_ties(self):
        fun = lambda a, u: a.at[mx.array([0, 0, 1])].minimum(u)
        a = mx.array([3.0, 2.0, 7.0])
        u = mx.array([3.0, 3.0, 2.0])
        g = mx.array([6.0, 4.0, 5.0])
        _, (da, du) = mx.vjp(fun, [a, u], [g])
        # position 0: a, u[0] and u[1] all equal 3: g / 3 each;
        # position 1: a and u[2] equal 2: g / 2 each
        self.assertEqual(da.tolist(), [2.0, 2.0, 5.0])
        self.assertEqual(du.tolist(), [2.0, 2.0, 2.0])

    def test_slice_ties(self):
        # The same convention for slices (SliceUpdate)
        fun = lambda a, v: a.at[1:3].minimum(v)
        a = mx.array([1.0, 2.0, 3.0, 4.0])
        v = mx.array([2.0, 5.0])
        g = mx.array([4.0, 6.0, 8.0, 2.0])
        _, (da, dv) = mx.vjp(fun, [a, v], [g])
        self.assertEqual(da.tolist(), [4.0, 3.0, 8.0, 2.0])
        self.assertEqual(dv.tolist(), [3.0, 0.0])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
