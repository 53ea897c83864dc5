"""The unary elementwise ops' MLX calls (harness/ops/elementwise.py): one function
per op, each the one MLX call on operand "a"."""
import mlx.core as mx


def abs_call(operands, params):
    return mx.abs(operands["a"])


def arccos_call(operands, params):
    return mx.arccos(operands["a"])


def arccosh_call(operands, params):
    return mx.arccosh(operands["a"])


def arcsin_call(operands, params):
    return mx.arcsin(operands["a"])


def arcsinh_call(operands, params):
    return mx.arcsinh(operands["a"])


def arctan_call(operands, params):
    return mx.arctan(operands["a"])


def arctanh_call(operands, params):
    return mx.arctanh(operands["a"])


def ceil_call(operands, params):
    return mx.ceil(operands["a"])


def floor_call(operands, params):
    return mx.floor(operands["a"])


def round_call(operands, params):
    return mx.round(operands["a"])


def sign_call(operands, params):
    return mx.sign(operands["a"])


def sin_call(operands, params):
    return mx.sin(operands["a"])


def cos_call(operands, params):
    return mx.cos(operands["a"])


def tan_call(operands, params):
    return mx.tan(operands["a"])


def sinh_call(operands, params):
    return mx.sinh(operands["a"])


def cosh_call(operands, params):
    return mx.cosh(operands["a"])


def tanh_call(operands, params):
    return mx.tanh(operands["a"])


def erf_call(operands, params):
    return mx.erf(operands["a"])


def erfinv_call(operands, params):
    return mx.erfinv(operands["a"])


def exp_call(operands, params):
    return mx.exp(operands["a"])


def expm1_call(operands, params):
    return mx.expm1(operands["a"])


def log_call(operands, params):
    return mx.log(operands["a"])


def log2_call(operands, params):
    return mx.log2(operands["a"])


def log10_call(operands, params):
    return mx.log10(operands["a"])


def log1p_call(operands, params):
    return mx.log1p(operands["a"])


def negative_call(operands, params):
    return mx.negative(operands["a"])


def sigmoid_call(operands, params):
    return mx.sigmoid(operands["a"])


def sqrt_call(operands, params):
    return mx.sqrt(operands["a"])


def rsqrt_call(operands, params):
    return mx.rsqrt(operands["a"])


def square_call(operands, params):
    return mx.square(operands["a"])


def conjugate_call(operands, params):
    return mx.conjugate(operands["a"])


def real_call(operands, params):
    return mx.real(operands["a"])


def imag_call(operands, params):
    return mx.imag(operands["a"])


def astype_call(operands, params):
    return operands["a"].astype(getattr(mx, params["to"]))


def identity_call(operands, params):
    """The input itself: mx.vjp differentiates the Copy it makes of every primal."""
    return operands["a"]
