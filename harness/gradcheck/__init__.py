"""Reference-free gradient checks for any MLX function: `gradcheck(fn, inputs)`.

fn's MLX derivatives (mx.vjp, mx.jvp, their identity, vmap, compile, second
order) in each dtype are compared with fn itself evaluated in float64 on the
CPU and differentiated numerically with a stated error bound. The options are
gradcheck's (below); docs/gradcheck.md has examples.

This module is itself callable, `mlx_vjpcheck.gradcheck(fn, inputs, ...)`: the
package's `from mlx_vjpcheck import gradcheck` may find either the function or
this module (a submodule import sets the package attribute), and both work.
"""
import sys
import types

from .api import gradcheck
from .report import Check, GradcheckError, Report
from .testing import parametrize_dtypes

__all__ = ["gradcheck", "GradcheckError", "Report", "Check", "parametrize_dtypes"]


class _CallableModule(types.ModuleType):
    def __call__(self, fn, inputs, **options):
        return gradcheck(fn, inputs, **options)


sys.modules[__name__].__class__ = _CallableModule
