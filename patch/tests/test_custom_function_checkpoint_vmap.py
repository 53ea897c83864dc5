import unittest

import mlx.core as mx
import mlx_tests


class TestCheckpointVmap(mlx_tests.MLXTestCase):
    # vmap(f)(X) is f applied to each row of X; for f the gradient of a
    # checkpointed function that holds as it does without the checkpoint.

    def test_vmap_of_checkpoint_grad(self):
        # d/dx sum(sin(x) x) = sin(x) + x cos(x)
        inner = lambda x: mx.sin(x) * x
        ckpt = mx.grad(lambda x: mx.checkpoint(inner)(x).sum())
        x = mx.array([[0.5, 1.0, -2.0], [2.0, -1.0, 0.25]])
        want = mx.array(
            [
                [0.9182168195493894, 1.3817732906760363, -0.0770037537313969],
                [0.0770037537313969, -1.3817732906760363, 0.4896320646821841],
            ]
        )
        self.assertTrue(mx.allclose(mx.vmap(ckpt)(x), want))
        self.assertTrue(mx.allclose(mx.vmap(ckpt, in_axes=1, out_axes=1)(x.T), want.T))

    def test_vmap_of_checkpoint_vjp_unbatched_cotangent(self):
        # d x = (g (1 - tanh(x w)^2)) w^T, per row of x
        w = mx.array([[1.0, -1.0], [0.5, 2.0]])
        g = mx.array([1.0, 2.0])
        f = mx.checkpoint(lambda x, w: mx.tanh(x @ w))

        def vjp_x(x):
            return mx.vjp(lambda x: f(x, w), [x], [g])[1][0]

        x = mx.array([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]])
        want = mx.array(
            [
                [-0.86923099, 4.14106941],
                [0.27166367, 1.93183839],
                [0.71102327, 0.98056096],
            ]
        )
        self.assertTrue(mx.allclose(mx.vmap(vjp_x)(x), want))

    def test_depends_under_vmap(self):
        a, b = mx.array([[1.0, 2.0], [3.0, 4.0]]), mx.array([5.0, 6.0])
        f = lambda x, y: mx.depends([x * 2], [y])[0]
        got = mx.vmap(f, in_axes=(0, None))(a, b)
        self.assertEqual(got.tolist(), [[2.0, 4.0], [6.0, 8.0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
