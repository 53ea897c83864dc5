"""The binary elementwise ops' MLX calls (harness/ops/binary.py): one function per op,
each the one MLX call on operands "a" and "b" (broadcast by MLX where their shapes differ)."""
import mlx.core as mx


def add_call(operands, params):
    return mx.add(operands["a"], operands["b"])


def subtract_call(operands, params):
    return mx.subtract(operands["a"], operands["b"])


def multiply_call(operands, params):
    return mx.multiply(operands["a"], operands["b"])


def divide_call(operands, params):
    return mx.divide(operands["a"], operands["b"])


def power_call(operands, params):
    return mx.power(operands["a"], operands["b"])


def remainder_call(operands, params):
    return mx.remainder(operands["a"], operands["b"])


def maximum_call(operands, params):
    return mx.maximum(operands["a"], operands["b"])


def minimum_call(operands, params):
    return mx.minimum(operands["a"], operands["b"])


def logaddexp_call(operands, params):
    return mx.logaddexp(operands["a"], operands["b"])


def arctan2_call(operands, params):
    return mx.arctan2(operands["a"], operands["b"])


def divmod_call(operands, params):
    """(a // b, a % b): the part param picks the output differentiated."""
    return mx.divmod(operands["a"], operands["b"])[int(params.get("part", 1))]
