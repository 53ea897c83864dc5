"""The FFTs of mx.fft (MLX's FFT primitive), one function each: fft, ifft, rfft, irfft
(params n, axis, norm) and fft2, fftn, ifftn, rfftn, irfftn (params s, axes, norm)."""
import mlx.core as mx


def _one(fn):
    def call(operands, params):
        return fn(operands["a"], n=params.get("n"), axis=params.get("axis", -1),
                  norm=params.get("norm", "backward"))
    return call


def _many(fn, default_axes=None):
    def call(operands, params):
        return fn(operands["a"], s=params.get("s"), axes=params.get("axes", default_axes),
                  norm=params.get("norm", "backward"))
    return call


fft = _one(mx.fft.fft)
ifft = _one(mx.fft.ifft)
rfft = _one(mx.fft.rfft)
irfft = _one(mx.fft.irfft)
fft2 = _many(mx.fft.fft2, [-2, -1])
fftn = _many(mx.fft.fftn)
ifftn = _many(mx.fft.ifftn)
rfftn = _many(mx.fft.rfftn)
irfftn = _many(mx.fft.irfftn)
