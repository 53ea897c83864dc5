import unittest

import mlx.core as mx
import mlx_tests
import numpy as np


class TestReduceEmptyAxes(mlx_tests.MLXTestCase):
    # A reduction over no elements is the identity: prod 1, sum 0, whatever
    # the operand's layout (an array made from numpy can take the general
    # plan, where the empty axes left no axis to reduce).

    def test_empty_from_numpy(self):
        for _ in range(20):
            mx.eval(mx.full((64,), 7.5))  # what an empty buffer would read
            a = mx.array(np.zeros((0, 2), dtype=np.float32))
            self.assertEqual(mx.prod(a).item(), 1.0)
            self.assertEqual(mx.sum(a).item(), 0.0)
            self.assertEqual(mx.prod(a, axis=0).tolist(), [1.0, 1.0])
            self.assertEqual(mx.sum(a, axis=0).tolist(), [0.0, 0.0])
            self.assertEqual(mx.sum(a, axis=1).tolist(), [])

            b = mx.array(np.zeros((3, 0, 2), dtype=np.float32))
            self.assertEqual(mx.prod(b, axis=1).tolist(), [[1.0, 1.0]] * 3)
            self.assertEqual(mx.sum(b, axis=(0, 1)).tolist(), [0.0, 0.0])

    def test_var_empty_axis_from_numpy(self):
        # The variance of nothing is 0 / 0 (as numpy's); it must return
        for _ in range(200):
            a = mx.array(np.zeros((3, 0), dtype=np.float32))
            out = mx.var(a, axis=1)
            mx.eval(out)
        self.assertEqual(out.shape, (3,))
        self.assertTrue(mx.all(mx.isnan(out)).item())
        self.assertTrue(mx.all(mx.isnan(mx.std(a, axis=1))).item())


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
