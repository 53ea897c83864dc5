#!/usr/bin/env python3
"""Check an mlx-vjpcheck evidence directory or bundle: python3 validate_artifacts.py DIR|ZIP

The same command as `mlx-vjpcheck validate` (harness/cli/validate.py), for a
checkout without an installed package. Needs numpy only (no MLX). Exit 0 every
check passed, 1 a check failed, 2 bad input (or numpy missing), 130 interrupted.
"""
import os
import sys

# Runs from a bare checkout too: the harness package sits next to this file.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

if __name__ == "__main__":
    try:
        from harness.cli.validate import script
        sys.exit(script(prog="validate_artifacts.py"))
    except KeyboardInterrupt:
        print("validate_artifacts.py: interrupted", file=sys.stderr)
        sys.exit(130)
    except ModuleNotFoundError as e:
        if e.name != "numpy":
            raise
        print("validate_artifacts.py: needs numpy, which is not installed: python3 -m pip install numpy",
              file=sys.stderr)
        sys.exit(2)
