import unittest

import mlx.core as mx
import mlx_tests


class TestNotEqualVmapOutAxes(mlx_tests.MLXTestCase):
    # vmap(f)(B) must equal stacking f(B[i]), also when the other operand is
    # not batched (its batch axis is then not the output's).

    def test_unbatched_operand(self):
        a = mx.array([1, 2, 3])
        b = mx.array([[1, 0, 3], [0, 2, 0]])
        out = mx.vmap(lambda b: mx.not_equal(a, b))(b)
        self.assertEqual(out.tolist(), [[False, True, False], [True, False, True]])
        out = mx.vmap(lambda b: mx.not_equal(mx.array(1), b))(b)
        self.assertEqual(out.tolist(), [[False, True, True], [True, True, True]])

    def test_unbatched_operand_of_higher_rank(self):
        # a (3, 1) against rows b[i] of 4: each item is a (3, 4) table
        a = mx.array([[1], [2], [3]])
        b = mx.array([[1, 2, 3, 4], [3, 3, 3, 3]])
        out = mx.vmap(lambda b: mx.not_equal(a, b))(b)
        self.assertEqual(
            out.tolist(),
            [
                [
                    [False, True, True, True],
                    [True, False, True, True],
                    [True, True, False, True],
                ],
                [[True] * 4, [True] * 4, [False] * 4],
            ],
        )

    def test_vmap_of_vjp(self):
        # The forward per item is (3, 4); the VJP of a comparison is zero in
        # b's own shape
        a = mx.array([[2.0], [-2.0], [-3.0]])
        b = mx.array([[-1.5, -2.5, -2.5, -0.5]] * 2)
        g = mx.ones((2, 3, 4))

        def fwd_and_grad(b, g):
            (y,), (db,) = mx.vjp(lambda b: mx.not_equal(a, b), [b], [g])
            return y, db

        y, db = mx.vmap(fwd_and_grad)(b, g)
        self.assertEqual(y.tolist(), [[[True] * 4] * 3] * 2)
        self.assertEqual(db.tolist(), [[0.0] * 4] * 2)


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
