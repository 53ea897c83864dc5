import unittest

import mlx.core as mx
import mlx_tests


class TestSignShapelessGrad(mlx_tests.MLXTestCase):
    # The derivative of sign is zero in the input's shape, also under
    # shapeless compilation at a new shape.

    def test_sign_grad_new_shapes(self):
        fun = mx.compile(mx.grad(lambda x: mx.sign(x).sum()), shapeless=True)
        self.assertEqual(fun(mx.ones((2, 3))).tolist(), [[0.0] * 3] * 2)
        self.assertEqual(fun(mx.ones((3, 3))).tolist(), [[0.0] * 3] * 3)
        self.assertEqual(fun(mx.ones((5, 3))).tolist(), [[0.0] * 3] * 5)

    def test_softshrink_like_grad(self):
        # sign's zeros meet arrays of the new shape in a fused kernel
        def loss(x):
            return mx.sum(x - mx.sign(x) * 0.5)

        fun = mx.compile(mx.grad(loss), shapeless=True)
        self.assertEqual(fun(mx.ones((2, 4))).tolist(), [[1.0] * 4] * 2)
        self.assertEqual(fun(mx.ones((3, 4))).tolist(), [[1.0] * 4] * 3)
        self.assertEqual(fun(mx.ones((64, 4))).tolist(), [[1.0] * 4] * 64)


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
