import unittest

import mlx.core as mx
import mlx_tests


class TestEmptyNegativeStepSlice(mlx_tests.MLXTestCase):
    # x[-3::-1] of 2 elements starts left of index 0 and is empty, as in
    # numpy. Every transform of the slice must see the same empty slice:
    # the VJP is zeros of x's shape, the JVP and vmap are empty.

    def test_vjp(self):
        x = mx.array([1.0, 2.0])
        f = lambda x: x[-3::-1]
        (y,), (dx,) = mx.vjp(f, [x], [mx.zeros((0,))])
        self.assertEqual(y.shape, (0,))
        self.assertEqual(dx.tolist(), [0.0, 0.0])

        x = mx.zeros((2, 0))
        (y,), (dx,) = mx.vjp(lambda x: x[-3::-2], [x], [mx.zeros((0, 0))])
        self.assertEqual(y.shape, (0, 0))
        self.assertEqual(dx.shape, (2, 0))

    def test_jvp_and_vmap(self):
        x = mx.array([1.0, 2.0])
        f = lambda x: x[-3::-1]
        _, (t,) = mx.jvp(f, [x], [mx.ones((2,))])
        self.assertEqual(t.shape, (0,))
        self.assertEqual(mx.vmap(f)(mx.ones((3, 2))).shape, (3, 0))

    def test_nonempty_unchanged(self):
        x = mx.array([1.0, 2.0, 3.0])
        _, (dx,) = mx.vjp(lambda x: x[-2::-1], [x], [mx.array([4.0, 5.0])])
        self.assertEqual(dx.tolist(), [5.0, 4.0, 0.0])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
