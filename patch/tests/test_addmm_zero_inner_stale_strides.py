import unittest

import mlx.core as mx
import mlx_tests


class TestAddmmZeroInner(mlx_tests.MLXTestCase):
    # With K = 0 the product a @ b is all zeros, so addmm(c, a, b, alpha, beta)
    # is beta * c, whatever layout c has.

    def _prime(self):
        # Leaves a stride of -1 in freed memory that a later 0-d array's empty
        # stride vector may reuse (the general binary path read it on 0.32.4).
        x = mx.as_strided(mx.ones((64,)), (2, 2), (1, 3), 32)
        y = mx.as_strided(mx.ones((64,)), (2, 2), (-1, -1), 32)
        mx.eval(x * y)

    def test_strided_c(self):
        c = mx.array([[1.0, 50.0], [-2.0, 50.0]])[:, ::2]
        a = mx.zeros((2, 0))
        b = mx.zeros((0, 1))
        for _ in range(4):
            self._prime()
            out = mx.addmm(c, a, b, alpha=1.0, beta=2.0)
            self.assertEqual(out.tolist(), [[2.0], [-4.0]])

    def test_transposed_c(self):
        # a transposed c is dense in memory (the contiguous path): right before too
        c = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).T
        a = mx.zeros((3, 0))
        b = mx.zeros((0, 2))
        self._prime()
        out = mx.addmm(c, a, b, alpha=1.0, beta=-0.5)
        self.assertEqual(out.tolist(), [[-0.5, -2.0], [-1.0, -2.5], [-1.5, -3.0]])

    def test_contiguous_and_scalar_c(self):
        # the paths that were right stay right
        a = mx.zeros((2, 0))
        b = mx.zeros((0, 2))
        c = mx.array([[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual(
            mx.addmm(c, a, b, beta=3.0).tolist(), [[3.0, 6.0], [9.0, 12.0]]
        )
        self.assertEqual(
            mx.addmm(mx.array(2.0), a, b, beta=3.0).tolist(), [[6.0, 6.0], [6.0, 6.0]]
        )


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
