import unittest

import mlx.core as mx
import mlx_tests


class TestCompiledShapelessFusedOverread(mlx_tests.MLXTestCase):
    # A fused elementwise kernel under shapeless compilation has the shape its
    # inputs broadcast to: a size 0 axis against a size 1 one stays 0, and
    # inputs that do not broadcast are an error (not a read past a buffer).

    def test_tril_new_shape(self):
        # tril's mask has the traced shape: more rows at a later call give
        # the right values or raise, never values read past the mask
        fun = mx.compile(lambda x: mx.tril(x, -1), shapeless=True)
        x = mx.arange(1.0, 9.0).reshape(2, 4)
        self.assertEqual(fun(x).tolist(), [[0.0] * 4, [5.0, 0.0, 0.0, 0.0]])
        x = mx.arange(1.0, 13.0).reshape(3, 4)
        want = [[0.0] * 4, [5.0, 0.0, 0.0, 0.0], [9.0, 10.0, 0.0, 0.0]]
        try:
            out = fun(x).tolist()
        except ValueError:
            out = want
        self.assertEqual(out, want)

    def test_fused_inputs_that_do_not_broadcast(self):
        # A (2, 4) array fixed when traced against an input of 64 rows
        fun = mx.compile(lambda x: mx.where(mx.tri(2, 4) > 0, x, 0.0), shapeless=True)
        self.assertEqual(
            fun(mx.ones((2, 4))).tolist(), [[1.0, 0.0, 0.0, 0.0], [1.0] * 2 + [0.0] * 2]
        )
        with self.assertRaises(ValueError):
            mx.eval(fun(mx.ones((64, 4))))


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
