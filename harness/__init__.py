"""mlx-vjpcheck: differential gradient checks for MLX's gather-like ops.

Modules on the validation path (scenario, layout, reference, checks, verdict,
manifest, validate) import numpy at most, never mlx, so evidence can be
rechecked on a machine without MLX.
"""

__version__ = "0.1.0"
