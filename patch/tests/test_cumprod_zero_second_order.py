import unittest

import mlx.core as mx
import mlx_tests


class TestCumprodSecondOrderZeros(mlx_tests.MLXTestCase):
    # y_j = prod_{k <= j} x_k, dx_i = sum_{j >= i} g_j prod_{k <= j, k != i} x_k
    # is a polynomial in x: its own derivative is finite at zeros of x. With
    # g = 1 and u = 1, the second order VJP is the gradient of
    # L(x) = sum_i dx_i.

    def second_order(self, x, **kwargs):
        f = lambda x: mx.cumprod(x, **kwargs)

        def grad(x):
            _, (dx,) = mx.vjp(f, [x], [mx.ones(x.shape)])
            return dx

        dx = grad(x)
        _, (d2,) = mx.vjp(grad, [x], [mx.ones(x.shape)])
        return dx.tolist(), d2.tolist()

    def test_one_zero(self):
        # x = [2, 0, 3]: dx = [1 + x1 + x1 x2, x0 + x0 x2, x0 x1] = [1, 8, 0];
        # dL/dx = [1 + x1 + x2, 1 + x0 + x2, x0 + x1] = [4, 6, 2]
        dx, d2 = self.second_order(mx.array([2.0, 0.0, 3.0]))
        self.assertEqual(dx, [1.0, 8.0, 0.0])
        self.assertEqual(d2, [4.0, 6.0, 2.0])

    def test_two_zeros(self):
        # x = [0, 2, 0, 3]: dL/dx_m = sum_{j >= m} sum_{i <= j, i != m}
        # prod_{k <= j, k != i, m} x_k = [9, 1, 8, 0]
        dx, d2 = self.second_order(mx.array([0.0, 2.0, 0.0, 3.0]))
        self.assertEqual(dx, [3.0, 0.0, 0.0, 0.0])
        self.assertEqual(d2, [9.0, 1.0, 8.0, 0.0])

    def test_all_zeros(self):
        # x = 0: dx = [1, 0, 0], dL/dx = [1, 1, 0]
        dx, d2 = self.second_order(mx.zeros(3))
        self.assertEqual(dx, [1.0, 0.0, 0.0])
        self.assertEqual(d2, [1.0, 1.0, 0.0])

    def test_exclusive_and_reverse(self):
        # exclusive: dx_i = sum_{j > i} prod_{k < j, k != i} x_k; x = [0, 2, 0]:
        # L = 1 + x1 + x0, dL/dx = [1, 1, 0]
        dx, d2 = self.second_order(mx.array([0.0, 2.0, 0.0]), inclusive=False)
        self.assertEqual(dx, [3.0, 0.0, 0.0])
        self.assertEqual(d2, [1.0, 1.0, 0.0])
        # reverse of the one-zero case
        dx, d2 = self.second_order(mx.array([3.0, 0.0, 2.0]), reverse=True)
        self.assertEqual(dx, [0.0, 8.0, 1.0])
        self.assertEqual(d2, [2.0, 6.0, 4.0])

    def test_vmap(self):
        # per row: x = [2, 0, 3] as in test_one_zero, and x = [0, 2, 0]:
        # dx = [1 + x1 + x1 x2, x0 + x0 x2, x0 x1] = [3, 0, 0],
        # dL/dx = [1 + x1 + x2, 1 + x0 + x2, x0 + x1] = [3, 1, 2]
        def grad(x):
            _, (dx,) = mx.vjp(mx.cumprod, [x], [mx.ones(x.shape)])
            return dx

        def second_order(x):
            _, (d2,) = mx.vjp(grad, [x], [mx.ones(x.shape)])
            return grad(x), d2

        x = mx.array([[2.0, 0.0, 3.0], [0.0, 2.0, 0.0]])
        dx, d2 = mx.vmap(second_order)(x)
        self.assertEqual(dx.tolist(), [[1.0, 8.0, 0.0], [3.0, 0.0, 0.0]])
        self.assertEqual(d2.tolist(), [[4.0, 6.0, 2.0], [3.0, 1.0, 2.0]])

    def test_length_one(self):
        # exclusive of one element is the constant 1: dx = 0, d2 = 0
        dx, d2 = self.second_order(mx.array([0.0]), inclusive=False)
        self.assertEqual(dx, [0.0])
        self.assertEqual(d2, [0.0])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
