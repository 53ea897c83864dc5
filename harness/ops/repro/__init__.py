"""The MLX call of each op, one standalone file per op module: mlx, numpy and
the standard library only, no future-import line, nothing from the harness.
The harness runs these functions, and a reproducer embeds the file as text
(harness/cases/reproducer.py), so a maintainer reads exactly what was run.

Each defines `mlx_call(operands, params)` (or one function per op the module
declares): floating operands arrive as MLX arrays, integer operands (index
arrays, codes, masks) as int64 numpy arrays, and the call converts them.
"""
