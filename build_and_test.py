#!/usr/bin/env python3
"""Validate the proposed MLX patch with the native suite: pristine vs patched units.

    python3 build_and_test.py --mlx-source ~/mlx --mlx-build ~/mlx/build

Thin entry point; the command line is harness/cli/gate.py. Install
this project first (python3 -m pip install -e .): it needs numpy and rich,
and says so in one line (exit 2) before any work when they are missing.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

if __name__ == "__main__":
    try:
        from harness.cli.gate import main
        sys.exit(main())
    except KeyboardInterrupt:
        print("build_and_test: interrupted", file=sys.stderr)
        sys.exit(130)
    except ModuleNotFoundError as e:
        if e.name not in ("numpy", "rich"):
            raise
        print(f"build_and_test.py: needs {e.name}, which is not installed: python3 -m pip install -e . "
              "(this project, with numpy and rich)", file=sys.stderr)
        sys.exit(2)
