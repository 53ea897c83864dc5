import unittest

import mlx.core as mx
import mlx_tests


class TestBlockMaskedMMBroadcastOperand(mlx_tests.MLXTestCase):
    # out[i] = (mask_lhs[i] * a[i]) @ (mask_rhs[i] * b[i]) with the masks
    # expanded to blocks. An operand shared by every batch item (broadcast) is
    # masked per item: the mask of one item must not leak into another.

    def test_shared_lhs(self):
        a = mx.ones((2, 2))  # shared by both items
        b = mx.ones((2, 2, 2))
        mask_lhs = mx.array([[[False]], [[True]]])

        def fun(a, b):
            return mx.block_masked_mm(a, b, block_size=32, mask_lhs=mask_lhs)

        (y,), (da, db) = mx.vjp(fun, [a, b], [mx.ones((2, 2, 2))])
        # item 0: a masked out; item 1: ones @ ones = 2
        self.assertEqual(y.tolist(), [[[0, 0], [0, 0]], [[2, 2], [2, 2]]])
        # da = sum_i mask_i * g_i b_i^T; db_i = (mask_i a)^T g_i
        self.assertEqual(da.tolist(), [[2, 2], [2, 2]])
        self.assertEqual(db.tolist(), [[[0, 0], [0, 0]], [[2, 2], [2, 2]]])

    def test_shared_rhs(self):
        a = mx.array([[[1.0, 2.0], [3.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
        b = mx.array([[1.0, 1.0], [1.0, 2.0]])  # shared by both items
        mask_rhs = mx.array([[[False]], [[True]]])

        def fun(a, b):
            return mx.block_masked_mm(a, b, block_size=32, mask_rhs=mask_rhs)

        g = mx.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]])
        (y,), (da, db) = mx.vjp(fun, [a, b], [g])
        # item 0: b masked out; item 1: a[1] @ b = b
        self.assertEqual(y.tolist(), [[[0, 0], [0, 0]], [[1, 1], [1, 2]]])
        # da_0 = 0, da_1 = g_1 b^T; db = a_1^T g_1
        self.assertEqual(da.tolist(), [[[0, 0], [0, 0]], [[2, 3], [2, 3]]])
        self.assertEqual(db.tolist(), [[1, 1], [1, 1]])

    def test_shared_lhs_both_masks(self):
        a = mx.ones((2, 2))  # shared by the three items
        b = mx.ones((3, 2, 2))
        mask_lhs = mx.array([[[False]], [[True]], [[True]]])
        mask_rhs = mx.array([[[True]], [[True]], [[False]]])
        y = mx.block_masked_mm(
            a, b, block_size=32, mask_lhs=mask_lhs, mask_rhs=mask_rhs
        )
        self.assertEqual(
            y.tolist(),
            [[[0, 0], [0, 0]], [[2, 2], [2, 2]], [[0, 0], [0, 0]]],
        )


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
