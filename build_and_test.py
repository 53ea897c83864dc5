#!/usr/bin/env python3
"""Validate the proposed MLX patch with the native suite: pristine vs patched units.

    python build_and_test.py --mlx-source ~/mlx --mlx-build ~/mlx/build

Thin entry point; the command line is harness/cli/build_and_test.py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.cli.build_and_test import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
