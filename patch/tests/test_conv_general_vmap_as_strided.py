import unittest

import mlx.core as mx
import mlx_tests


class TestAsStridedVmap(mlx_tests.MLXTestCase):
    # vmap(f)(X) stacks f(X[i]); as_strided views each example's elements in
    # row-major order, so its vmap is the same view of every example.

    def test_vmap_as_strided(self):
        x = mx.arange(12.0).reshape(3, 4)
        f = lambda r: mx.as_strided(r, (2, 2), (1, 2), 0)
        want = [
            [[0.0, 2.0], [1.0, 3.0]],
            [[4.0, 6.0], [5.0, 7.0]],
            [[8.0, 10.0], [9.0, 11.0]],
        ]
        self.assertEqual(mx.vmap(f)(x).tolist(), want)
        self.assertEqual(mx.vmap(f, in_axes=1)(x.T).tolist(), want)

    def test_vmap_as_strided_offset_and_matrix_rows(self):
        x = mx.arange(24.0).reshape(2, 3, 4)
        f = lambda m: mx.as_strided(m, (3, 2), (4, 1), 1)
        want = [
            [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]],
            [[13.0, 14.0], [17.0, 18.0], [21.0, 22.0]],
        ]
        self.assertEqual(mx.vmap(f)(x).tolist(), want)

    def test_vmap_of_conv_weight_grad(self):
        # the weight VJP of a convolution whose kernel is wider than its input
        # goes through as_strided; dw[k] = sum of x[t] with t = k - 2 + s over
        # the output positions s
        w = mx.array([1.0, -2.0, 0.5, 3.0, -1.0]).reshape(1, 5, 1)

        def dw(x):
            loss = lambda w: mx.conv1d(x[None], w, padding=2).sum()
            return mx.grad(loss)(w)

        x = mx.array([[1.0, 2.0, -1.0], [0.5, -3.0, 2.0]])[..., None]
        want = [
            [[[1.0], [3.0], [2.0], [1.0], [-1.0]]],
            [[[0.5], [-2.5], [-0.5], [-1.0], [2.0]]],
        ]
        self.assertEqual(mx.vmap(dw)(x).tolist(), want)


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
