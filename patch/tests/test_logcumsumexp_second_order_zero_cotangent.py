import unittest

import mlx.core as mx
import mlx_tests


class TestLogcumsumexpSecondOrder(mlx_tests.MLXTestCase):
    # y_i = log(sum_{j in W(i)} e^(x_j)) has J_ij = e^(x_j - y_i); the VJP is
    # dx = J^T g, linear in g. Its VJP with cotangent v is
    # d/dg = J v and d/dx = v * dx - J^T (g * J v), finite at g = 0.

    def second_order(self, x, g, v, **kwargs):
        f = lambda x: mx.logcumsumexp(x, **kwargs)

        def vjp(x, g):
            _, (dx,) = mx.vjp(f, [x], [g])
            return dx

        _, (d2x, d2g) = mx.vjp(vjp, [mx.array(x), mx.array(g)], [mx.array(v)])
        return d2x, d2g

    def test_zero_cotangent(self):
        # x = [1, 2, 3], g = [-4, 4, 0]: J v with v = 1 is 1 (rows of J sum
        # to 1); with v = e_0 it is [1, e / (e + e^2), e / (e + e^2 + e^3)]
        x, g = [1.0, 2.0, 3.0], [-4.0, 4.0, 0.0]
        _, d2g = self.second_order(x, g, [1.0, 1.0, 1.0])
        self.assertTrue(mx.allclose(d2g, mx.array([1.0, 1.0, 1.0])))
        _, d2g = self.second_order(x, g, [1.0, 0.0, 0.0])
        expected = mx.array([1.0, 0.2689414, 0.0900306])
        self.assertTrue(mx.allclose(d2g, expected))

    def test_both_derivatives(self):
        # x = [0, 0]: J = [[1, 0], [1/2, 1/2]]; g = [0, 2], v = [1, 0]:
        # dx = [1, 1], J v = [1, 1/2], J^T (g * J v) = J^T [0, 1] = [1/2, 1/2]
        d2x, d2g = self.second_order([0.0, 0.0], [0.0, 2.0], [1.0, 0.0])
        self.assertTrue(mx.allclose(d2x, mx.array([0.5, -0.5])))
        self.assertTrue(mx.allclose(d2g, mx.array([1.0, 0.5])))

    def test_large_range(self):
        # x = [0, 100]: J = [[1, 0], [e^-100, 1]], J [1, 1] = [1, 1]
        _, d2g = self.second_order([0.0, 100.0], [0.0, 1.0], [1.0, 1.0])
        self.assertTrue(mx.allclose(d2g, mx.array([1.0, 1.0])))

    def test_exclusive(self):
        # exclusive, x = 0: W(0) is empty, J = [[0, 0, 0], [1, 0, 0],
        # [1/2, 1/2, 0]], J [1, 1, 1] = [0, 1, 1]
        _, d2g = self.second_order(
            [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], inclusive=False
        )
        self.assertTrue(mx.allclose(d2g, mx.array([0.0, 1.0, 1.0])))

    def test_vmap(self):
        # rows: the cases of test_both_derivatives and test_large_range
        def second_order(x, g):
            def vjp(x, g):
                _, (dx,) = mx.vjp(mx.logcumsumexp, [x], [g])
                return dx

            _, (d2x, d2g) = mx.vjp(vjp, [x, g], [mx.array([1.0, 0.0])])
            return d2x, d2g

        x = mx.array([[0.0, 0.0], [0.0, 100.0]])
        g = mx.array([[0.0, 2.0], [0.0, 1.0]])
        d2x, d2g = mx.vmap(second_order)(x, g)
        # row 2: J [1, 0] = [1, 0], dx = [0, 1], J^T (g * J v) = 0
        self.assertTrue(mx.allclose(d2x, mx.array([[0.5, -0.5], [0.0, 0.0]])))
        self.assertTrue(mx.allclose(d2g, mx.array([[1.0, 0.5], [1.0, 0.0]])))

    def test_first_order_unchanged(self):
        # x = [0, 0], g = [1, 1]: dx = J^T g = [3/2, 1/2]
        _, (dx,) = mx.vjp(mx.logcumsumexp, [mx.array([0.0, 0.0])], [mx.ones(2)])
        self.assertEqual(dx.tolist(), [1.5, 0.5])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
