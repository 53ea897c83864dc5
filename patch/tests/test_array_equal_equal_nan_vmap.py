import unittest

import mlx.core as mx
import mlx_tests


class TestArrayEqualVmap(mlx_tests.MLXTestCase):
    # vmap of f is f applied to each row: array_equal(a, b, equal_nan=True)
    # treats NaN as equal to NaN under vmap as it does without it.

    def test_vmap_equal_nan(self):
        nan = float("nan")
        a = mx.array([[1.0, nan], [nan, 2.0], [1.0, 2.0]])
        b = mx.array([[1.0, nan], [nan, 3.0], [1.0, 2.0]])
        f = lambda x, y: mx.array_equal(x, y, equal_nan=True)
        got = mx.vmap(f)(a, b)
        want = [f(a[i], b[i]).item() for i in range(3)]
        self.assertEqual(want, [True, False, True])
        self.assertEqual(got.tolist(), want)

    def test_vmap_without_equal_nan(self):
        nan = float("nan")
        a = mx.array([[1.0, nan], [1.0, 2.0]])
        f = lambda x, y: mx.array_equal(x, y)
        self.assertEqual(mx.vmap(f)(a, a).tolist(), [False, True])

    def test_vmap_one_side_batched(self):
        nan = float("nan")
        a = mx.array([[nan, 1.0], [nan, 2.0]])
        b = mx.array([nan, 1.0])
        f = lambda x, y: mx.array_equal(x, y, equal_nan=True)
        self.assertEqual(mx.vmap(f, in_axes=(0, None))(a, b).tolist(), [True, False])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
