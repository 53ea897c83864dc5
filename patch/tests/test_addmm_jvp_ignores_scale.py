import unittest

import mlx.core as mx
import mlx_tests


class TestAddmmJVPScale(mlx_tests.MLXTestCase):
    # y = alpha (a @ b) + beta c: the tangent is
    # alpha (ta @ b + a @ tb) + beta tc.
    # a = [[1, 2]], b = [[3], [4]], c = [[5]], alpha = 2, beta = 3.

    def setUp(self):
        super().setUp()
        self.a = mx.array([[1.0, 2.0]])
        self.b = mx.array([[3.0], [4.0]])
        self.c = mx.array([[5.0]])
        self.f = lambda a, b, c: mx.addmm(c, a, b, alpha=2.0, beta=3.0)

    def test_each_operand(self):
        a, b, c = self.a, self.b, self.c
        ta, tb, tc = mx.array([[1.0, 0.0]]), mx.array([[0.0], [1.0]]), mx.array([[1.0]])
        zero = lambda x: mx.zeros(x.shape)
        _, (t,) = mx.jvp(self.f, [a, b, c], [ta, zero(b), zero(c)])
        self.assertEqual(t.tolist(), [[6.0]])  # 2 * (1 * 3)
        _, (t,) = mx.jvp(self.f, [a, b, c], [zero(a), tb, zero(c)])
        self.assertEqual(t.tolist(), [[4.0]])  # 2 * (2 * 1)
        _, (t,) = mx.jvp(self.f, [a, b, c], [zero(a), zero(b), tc])
        self.assertEqual(t.tolist(), [[3.0]])  # 3 * 1

    def test_all_operands(self):
        ta, tb, tc = mx.array([[1.0, 0.0]]), mx.array([[0.0], [1.0]]), mx.array([[1.0]])
        _, (t,) = mx.jvp(self.f, [self.a, self.b, self.c], [ta, tb, tc])
        self.assertEqual(t.tolist(), [[13.0]])  # 6 + 4 + 3

    def test_negative_alpha_zero_beta(self):
        f = lambda a, b, c: mx.addmm(c, a, b, alpha=-1.0, beta=0.0)
        ones = [mx.ones((1, 2)), mx.ones((2, 1)), mx.ones((1, 1))]
        _, (t,) = mx.jvp(f, [self.a, self.b, self.c], ones)
        # -((1 + 1) * ... ): -(ta @ b + a @ tb) = -(7 + 3) = -10, beta tc = 0
        self.assertEqual(t.tolist(), [[-10.0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
