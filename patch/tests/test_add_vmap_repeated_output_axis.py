import unittest

import mlx.core as mx
import mlx_tests


class TestVmapRepeatedOutputAxis(mlx_tests.MLXTestCase):
    # A function may return the same array more than once; vmap must move the
    # batch axis of each returned copy to its out_axes once.

    def test_same_output_twice(self):
        x = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        a, b = mx.vmap(lambda g: (g, g), in_axes=1)(x)
        self.assertEqual(a.tolist(), [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])
        self.assertEqual(b.tolist(), [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])

    def test_same_output_three_times(self):
        x = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        outs = mx.vmap(lambda g: [g, g, g], in_axes=1)(x)
        for out in outs:
            self.assertEqual(out.shape, (2, 3))
            self.assertEqual(out.tolist(), [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])

    def test_same_output_different_out_axes(self):
        x = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        a, b = mx.vmap(lambda g: (g, g), in_axes=1, out_axes=(0, 1))(x)
        self.assertEqual(a.tolist(), [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])
        self.assertEqual(b.tolist(), [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    def test_vmap_of_add_vjp(self):
        # The VJP of add returns the cotangent for both operands
        a, b = mx.zeros((2,)), mx.zeros((2,))
        g = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

        def grads(g):
            return mx.vjp(mx.add, [a, b], [g])[1]

        da, db = mx.vmap(grads, in_axes=1)(g)
        self.assertEqual(da.tolist(), [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])
        self.assertEqual(db.tolist(), [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
