import unittest

import mlx.core as mx
import mlx_tests


class TestSliceUpdateShapelessFit(mlx_tests.MLXTestCase):
    # A slice_update fixed when traced (the VJP of a slice) called at a new
    # shape must give the right values or raise, never write out of bounds.

    def test_flip_vjp_new_shape(self):
        def fun(x, g):
            return mx.vjp(lambda x: mx.flip(x, 0), [x], [g])[1][0]

        cf = mx.compile(fun, shapeless=True)
        g = mx.array([[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual(cf(mx.zeros((2, 2)), g).tolist(), [[3.0, 4.0], [1.0, 2.0]])
        g = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        try:
            out = cf(mx.zeros((3, 2)), g).tolist()
        except ValueError:
            out = [[5.0, 6.0], [3.0, 4.0], [1.0, 2.0]]
        self.assertEqual(out, [[5.0, 6.0], [3.0, 4.0], [1.0, 2.0]])
        try:
            out = cf(mx.zeros((1, 2)), mx.array([[1.0, 2.0]])).tolist()
        except ValueError:
            out = [[1.0, 2.0]]
        self.assertEqual(out, [[1.0, 2.0]])

    def test_slice_update_fixed_region_new_shape(self):
        # The first two rows, written into a larger source: still fits
        def fun(x, u):
            return mx.slice_update(x, u, mx.array([0]), (0,))

        x = mx.zeros((4, 2))
        u = mx.ones((2, 2))
        cf = mx.compile(lambda x, u: x.at[0:2].add(u), shapeless=True)
        self.assertEqual(cf(x, u).tolist(), [[1.0, 1.0]] * 2 + [[0.0, 0.0]] * 2)
        out = cf(mx.zeros((5, 2)), u)
        self.assertEqual(out.tolist(), [[1.0, 1.0]] * 2 + [[0.0, 0.0]] * 3)


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
