import unittest

import mlx.core as mx
import mlx_tests


class TestBitwiseVmapOutShape(mlx_tests.MLXTestCase):
    # vmap(f)(B) must equal stacking f(B[i]): with one operand unbatched the
    # output still has one row per batch element.

    def test_unbatched_left_operand(self):
        a = mx.array([1, 2, 3], mx.int32)
        b = mx.array([[1, 1, 1], [2, 2, 2]], mx.int32)

        def mapped(op):
            # in_axes 0 and 1 over the same batch give the same result
            out = mx.vmap(lambda b: op(a, b))(b).tolist()
            self.assertEqual(mx.vmap(lambda b: op(a, b), in_axes=1)(b.T).tolist(), out)
            return out

        self.assertEqual(mapped(mx.bitwise_xor), [[0, 3, 2], [3, 0, 1]])
        self.assertEqual(mapped(mx.bitwise_and), [[1, 0, 1], [0, 2, 2]])
        self.assertEqual(mapped(mx.bitwise_or), [[1, 3, 3], [3, 2, 3]])
        self.assertEqual(mapped(mx.left_shift), [[2, 4, 6], [4, 8, 12]])
        self.assertEqual(mapped(mx.right_shift), [[0, 1, 1], [0, 0, 0]])

    def test_unbatched_right_operand(self):
        a = mx.array([[1, 1, 1], [2, 2, 2]], mx.int32)
        b = mx.array([1, 2, 3], mx.int32)
        out = mx.vmap(lambda a: mx.bitwise_xor(a, b))(a)
        self.assertEqual(out.tolist(), [[0, 3, 2], [3, 0, 1]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
