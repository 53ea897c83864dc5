import unittest

import mlx.core as mx
import mlx_tests


class TestNormShapelessGrad(mlx_tests.MLXTestCase):
    # The gradient of the norm of all elements keeps the input's shape under
    # shapeless compilation; an unflatten that no longer fits raises.

    def test_norm_grad_new_shapes(self):
        # d |x| / dx = x / |x|
        fun = mx.compile(mx.grad(lambda x: mx.linalg.norm(x)), shapeless=True)
        out = fun(mx.array([[3.0, 4.0]]))
        self.assertTrue(mx.allclose(out, mx.array([[0.6, 0.8]])))
        out = fun(mx.array([[2.0, 2.0], [2.0, 2.0]]))
        self.assertTrue(mx.allclose(out, mx.array([[0.5, 0.5], [0.5, 0.5]])))
        out = fun(mx.array([[1.0, 2.0], [2.0, 0.0], [0.0, 4.0]]))
        self.assertEqual(out.shape, (3, 2))
        self.assertTrue(
            mx.allclose(out, mx.array([[0.2, 0.4], [0.4, 0.0], [0.0, 0.8]]))
        )

    def test_norm_keepdims(self):
        x = mx.array([[3.0, 0.0], [0.0, 4.0]])
        out = mx.linalg.norm(x, keepdims=True)
        self.assertEqual(out.shape, (1, 1))
        self.assertEqual(out.item(), 5.0)
        self.assertEqual(mx.linalg.norm(mx.array(-2.0)).item(), 2.0)

    def test_flatten_grad_new_shape_raises(self):
        fun = mx.compile(mx.grad(lambda x: mx.flatten(x).sum()), shapeless=True)
        self.assertEqual(fun(mx.ones((2, 4))).shape, (2, 4))
        with self.assertRaises(ValueError):
            mx.eval(fun(mx.ones((3, 4))))


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
